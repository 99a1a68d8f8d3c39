#include "cli/model_calibration.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "cli/calibration.h"  // significant
#include "cli/op_profile.h"
#include "cli/tensor_io.h"
#include "graph/op_work.h"
#include "scheduler/compiler.h"
#include "scheduler/pipeline.h"
#include "scheduler/session.h"

namespace hetsched::cli {

namespace {

// "island 3 (vulkan)" → "vulkan" (scheduler/step_runner.cc names islands so).
std::string delegate_of_island(const std::string& label) {
  const size_t open = label.rfind('('), close = label.rfind(')');
  return open == std::string::npos || close == std::string::npos || close < open
             ? std::string()
             : label.substr(open + 1, close - open - 1);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The requests of `profile` (M planned with one delegate first), profiled.
Result<std::vector<RunStats>> profiled_runs(const Graph& graph, Profile profile, int repeats, int warmup,
                                            PlannedModel& planned_out) {
  profile.profile_ops = true;
  profile.max_in_flight = 1;
  profile.trace_path.clear();
  HS_ASSIGN_OR_RETURN(planned_out, plan_model(graph, profile));
  HS_ASSIGN_OR_RETURN(Program program, compile_program(graph, planned_out.plan, planned_out.delegates, profile));
  HS_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(std::move(program), profile));
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, make_inputs(session->input_names(), session->input_types(), {}));
  std::vector<Tensor> outputs;
  for (const TensorType& t : session->output_types()) outputs.emplace_back(t);
  for (int i = 0; i < warmup; ++i) HS_RETURN_IF_ERROR(session->run_into(inputs, outputs));
  std::vector<RunStats> runs(static_cast<size_t>(repeats));
  for (RunStats& stats : runs) HS_RETURN_IF_ERROR(session->run_into(inputs, outputs, &stats));
  return runs;
}

}  // namespace

Result<ModelCalibration> calibrate_model(const Profile& profile, const std::string& model, const InputShapes& shapes,
                                         int repeats, int warmup, CostTable& table) {
  HS_ASSIGN_OR_RETURN(Graph graph, load_model(model, shapes));
  std::unordered_map<std::string, NodeId> node_by_name;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) node_by_name.emplace(graph.node(n).name, n);

  ModelCalibration out;
  // Per delegate and signature, the time of every node measured with it.
  std::map<std::string, std::map<std::string, std::vector<double>>> times;
  std::map<std::string, std::string> device_class_of;
  for (const std::string& first : known_delegate_names()) {
    if (!profile.delegate_enabled(first)) continue;
    Profile p = profile;
    p.partition.prefer = first + "_first";
    p.partition.order.clear();
    PlannedModel planned;
    Result<std::vector<RunStats>> runs = profiled_runs(graph, p, repeats, warmup, planned);
    if (!runs.is_ok()) return runs.status().with_context("failed to calibrate on " + model + " (" + first + "_first): ");
    const OpProfile ops = summarize_op_profile(*runs);
    for (const OpPiece& piece : ops.pieces) {
      const std::string delegate_name = delegate_of_island(piece.island);
      const Delegate* delegate = planned.delegates.find(delegate_name);
      if (!delegate) continue;
      device_class_of[delegate_name] = delegate->device_class();
      auto it = table.delegates.find(delegate_name);
      const DelegateCosts costs = it != table.delegates.end()
                                      ? it->second
                                      : builtin_delegate_costs(delegate_name, delegate->device_class(), 0);
      // The piece's time, shared by roofline weight (equally when none has one).
      std::vector<std::pair<NodeId, double>> weighted;
      double total = 0;
      for (const std::string& name : piece.nodes) {
        auto n = node_by_name.find(name);
        if (n == node_by_name.end() || op_class_of(graph.node(n->second).op) == OpClass::kFree) continue;
        const double w = delegate->estimate(graph, n->second, costs).seconds;
        weighted.emplace_back(n->second, w);
        total += w;
      }
      for (const auto& [node, w] : weighted) {
        const double share = total > 0 ? w / total : 1.0 / static_cast<double>(weighted.size());
        times[delegate_name][op_signature(graph, node)].push_back(piece.p50_ms * 1e3 * share);
      }
    }
  }
  // One node with a signature measured in several runs (or several nodes
  // sharing one): the median.
  for (auto& [delegate_name, by_signature] : times) {
    auto [entry, fresh] = table.delegates.try_emplace(delegate_name);
    if (fresh) entry->second = builtin_delegate_costs(delegate_name, device_class_of.at(delegate_name), 0);
    DelegateCosts& costs = entry->second;
    for (auto& [signature, us] : by_signature) costs.measured_us[signature] = significant(median(std::move(us)));
    out.notes.push_back(model + ": " + delegate_name + " " + std::to_string(by_signature.size()) +
                        " op signatures measured");
  }
  for (const std::string& name : known_delegate_names())
    if (profile.delegate_enabled(name) && !times.count(name))
      out.notes.push_back(model + ": " + name + " times no pieces of its islands: roofline kept");
  return out;
}

}  // namespace hetsched::cli
