#include "cli/model_calibration.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "cli/calibration.h"  // significant
#include "cli/cli_common.h"  // warm_up
#include "cli/op_profile.h"
#include "cli/tensor_io.h"
#include "graph/op_work.h"
#include "partitioner/partition_plan.h"
#include "partitioner/plan_cost.h"  // measured_seconds
#include "scheduler/compiler.h"
#include "scheduler/pipeline.h"
#include "scheduler/session.h"

namespace hetsched::cli {

namespace {

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
  HS_RETURN_IF_ERROR(warm_up(*session, inputs, warmup));
  std::vector<RunStats> runs(static_cast<size_t>(repeats));
  for (RunStats& stats : runs) HS_RETURN_IF_ERROR(session->run_into(inputs, outputs, &stats));
  return runs;
}

// A host island takes longer than its nodes inside one large island: it
// copies what crosses its edges, converts rank-4 values between the
// request's NCHW and XNNPACK's NHWC, and finds them colder in the caches.
// What its p50 exceeds its nodes' measured times and the island cost by,
// summed over every host island of every plan, per byte of their edges, is
// the delegate's edge_gbps (DelegateCosts): the probe's 8 MiB chain sees
// only the copies, on warm caches.
struct HostIsland {
  std::string delegate;
  std::vector<NodeId> nodes;
  double ms = 0;     // p50
  double bytes = 0;  // copied at its edges: inputs and outputs
};

void fit_edges(const Graph& graph, const std::string& model, const std::vector<HostIsland>& islands, CostTable& table,
               ModelCalibration& out) {
  std::map<std::string, std::pair<double, double>> extra;  // delegate → (bytes, seconds)
  for (const HostIsland& island : islands) {
    auto it = table.delegates.find(island.delegate);
    if (it == table.delegates.end()) continue;
    const DelegateCosts& costs = it->second;
    double nodes_s = costs.island_us * 1e-6;
    for (NodeId n : island.nodes) nodes_s += measured_seconds(graph, n, costs).value_or(0.0);
    auto& [bytes, seconds] = extra[island.delegate];
    bytes += island.bytes;
    seconds += std::max(0.0, island.ms * 1e-3 - nodes_s);
  }
  constexpr double kMinBytes = 1 << 20;  // below this, the edges are lost in the noise
  for (const auto& [name, e] : extra) {
    const auto [bytes, seconds] = e;
    if (bytes < kMinBytes || seconds <= 0) continue;
    DelegateCosts& costs = table.delegates.at(name);
    costs.edge_gbps = significant(bytes / seconds * 1e-9);
    char line[160];
    std::snprintf(line, sizeof line, "%s edges: %.1f MB over its islands in all plans, %.3f ms beyond their nodes: "
                  "edge_gbps %g", name.c_str(), bytes * 1e-6, seconds * 1e3, costs.edge_gbps);
    out.notes.push_back(model + ": " + line);
  }
}

}  // namespace

Result<ModelCalibration> calibrate_model(const Profile& profile, const std::string& model, const InputShapes& shapes,
                                         int repeats, int warmup, CostTable& table) {
  HS_ASSIGN_OR_RETURN(Graph graph, load_model(model, shapes));
  std::unordered_map<std::string, NodeId> node_by_name;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) node_by_name.emplace(graph.node(n).name, n);

  ModelCalibration out;
  // Per delegate and signature, the time of every node measured with it:
  // in the delegate's own plan (delegate first: its largest islands, as a
  // plan that favours it runs them), and in the others (nodes left to it,
  // often one-node islands whose pieces carry their island's edges), used
  // only for signatures its own plan did not time.
  using Times = std::map<std::string, std::map<std::string, std::vector<double>>>;
  Times own, others;
  std::vector<HostIsland> host_islands;  // of every plan, for fit_edges
  std::map<std::string, std::string> device_class_of;
  for (const std::string& first : known_delegate_names()) {
    if (!profile.delegate_enabled(first)) continue;
    Profile p = profile;
    p.partition.prefer = first + "_first";
    p.partition.order.clear();
    PlannedModel planned;
    Result<std::vector<RunStats>> runs = profiled_runs(graph, p, repeats, warmup, planned);
    if (!runs.is_ok()) return runs.status().with_context("failed to calibrate on " + model + " (" + first + "_first): ");
    // Each island's p50: GPU time for device islands (their pieces leave out
    // barriers and the gaps around them; the island's time does not). A GPU
    // island timed by the host (no timestamps) would count its submit and
    // wait twice: left out.
    std::map<std::string, std::vector<double>> island_runs;
    for (const RunStats& run : *runs)
      for (const TraceEvent& e : run.events)
        if (!e.op && e.name.rfind("island ", 0) == 0 && (e.gpu_clock || e.track.rfind("gpu:", 0) != 0))
          island_runs[e.name].push_back(e.ms);
    const OpProfile ops = summarize_op_profile(*runs);
    for (const PlannedIsland& island : planned.plan.islands) {
      const std::string label = "island " + std::to_string(island.id) + " (" + island.delegate + ")";
      const Delegate* delegate = planned.delegates.find(island.delegate);
      if (!delegate || !island_runs.count(label)) continue;
      device_class_of[island.delegate] = delegate->device_class();
      auto it = table.delegates.find(island.delegate);
      const DelegateCosts costs = it != table.delegates.end()
                                      ? it->second
                                      : builtin_delegate_costs(island.delegate, delegate->device_class(), 0);
      const auto roofline = [&](NodeId n) {
        return op_class_of(graph.node(n).op) == OpClass::kFree ? 0.0 : delegate->estimate(graph, n, costs).seconds;
      };
      // Node times: each piece's time shared by roofline weight (equally
      // when none has one); an island that times no pieces is one piece.
      std::map<NodeId, double> node_ms;
      const auto share = [&](const std::vector<NodeId>& nodes, double ms) {
        double total = 0;
        for (NodeId n : nodes) total += roofline(n);
        for (NodeId n : nodes)
          if (op_class_of(graph.node(n).op) != OpClass::kFree)
            node_ms[n] += total > 0 ? ms * roofline(n) / total : ms / static_cast<double>(nodes.size());
      };
      double pieces_ms = 0;
      for (const OpPiece& piece : ops.pieces) {
        if (piece.island != label) continue;
        std::vector<NodeId> nodes;
        for (const std::string& name : piece.nodes)
          if (auto n = node_by_name.find(name); n != node_by_name.end()) nodes.push_back(n->second);
        share(nodes, piece.p50_ms);
        pieces_ms += piece.p50_ms;
      }
      const bool device = delegate->memory_kind() == MemoryDomain::Kind::kDevice;
      if (!device)
        host_islands.push_back({island.delegate, island.nodes, median(island_runs[label]),
                                static_cast<double>(island.input_bytes + island.output_bytes)});
      if (pieces_ms == 0) {
        if (!device) continue;  // a host island's time is mostly not its nodes'
        share(island.nodes, median(island_runs[label]));
      } else if (device) {
        const double scale = median(island_runs[label]) / pieces_ms;
        for (auto& [n, ms] : node_ms) ms *= scale;
      }
      Times& times = island.delegate == first ? own : others;
      for (const auto& [n, ms] : node_ms) times[island.delegate][op_signature(graph, n)].push_back(ms * 1e3);
    }
  }
  Times times = own;
  for (auto& [delegate_name, by_signature] : others)
    for (auto& [signature, us] : by_signature) times[delegate_name].try_emplace(signature, std::move(us));
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
  fit_edges(graph, model, host_islands, table, out);
  for (const std::string& name : known_delegate_names())
    if (profile.delegate_enabled(name) && !times.count(name))
      out.notes.push_back(model + ": " + name + " ran none of its nodes: roofline kept");
  return out;
}

}  // namespace hetsched::cli
