#include "cli/bench_policies.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "cli/tensor_io.h"
#include "partitioner/preview.h"  // json_quote
#include "scheduler/compiler.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"

namespace hetsched::cli {

namespace {

// One row's profile: the caller's with another policy or one delegate alone.
struct Variant {
  std::string name;
  bool alone = false;
  Profile profile;
};

std::vector<Variant> variants_of(const Profile& base) {
  std::vector<Variant> out;
  for (const char* policy : {"auto", "vgf_first", "vulkan_first", "cpu_first"}) {
    Profile p = base;
    p.partition.prefer = policy;
    p.partition.order.clear();
    out.push_back({policy, false, std::move(p)});
  }
  // An explicit order in the profile is a policy of its own.
  if (base.partition.prefer == "list") {
    std::string name = "[";
    for (size_t i = 0; i < base.partition.order.size(); ++i) name += (i ? ", " : "") + base.partition.order[i];
    out.push_back({name + "]", false, base});
  }
  for (const std::string& only : known_delegate_names()) {
    if (!base.delegate_enabled(only)) continue;
    Profile p = base;
    for (auto& [name, delegate] : p.delegates) delegate.enabled = name == only;
    out.push_back({only + "_only", true, std::move(p)});
  }
  return out;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Plans, compiles and times one variant into `row`.
Status run_variant(const Graph& graph, const Variant& v, const std::vector<std::string>& input_args,
                   const MeasureP50& measure, PolicyRow& row) {
  // As build_program does: the delegates that planned and compiled are gone
  // before the session makes its own.
  Result<Program> program = [&]() -> Result<Program> {
    HS_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(graph, v.profile));
    row.islands = static_cast<int>(planned.plan.islands.size());
    row.predicted_ms = planned.plan.predicted_ms;
    row.note = planned.plan.policy_note;
    row.cost_source = planned.plan.cost_source;
    for (const auto& node : planned.plan.nodes) row.plan += node.delegate + ";";
    return compile_program(graph, planned.plan, planned.delegates, v.profile);
  }();
  if (!program.is_ok()) return program.status();
  HS_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(std::move(*program), v.profile));
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                      make_inputs(session->input_names(), session->input_types(), input_args));
  HS_ASSIGN_OR_RETURN(row.measured_ms, measure(*session, inputs));
  return Status::ok();
}

double best_measured(const std::vector<PolicyRow>& rows) {
  double best = 0;
  for (const PolicyRow& r : rows)
    if (r.error.empty() && r.measured_ms > 0 && (best == 0 || r.measured_ms < best)) best = r.measured_ms;
  return best;
}

}  // namespace

Status check_comparable(const std::string& model) {
  if (model_format_of(model) == ModelFormat::kProgram)
    return invalid_argument("--compare-policies needs a model (.onnx or .hsg): the partition of a compiled program (" +
                            model + ") is fixed");
  return Status::ok();
}

Result<std::vector<PolicyRow>> compare_policies(const Profile& profile, const CommonOptions& common,
                                                const std::string& model, const std::vector<std::string>& input_args,
                                                const MeasureP50& measure) {
  HS_RETURN_IF_ERROR(check_comparable(model));
  HS_ASSIGN_OR_RETURN(InputShapes shapes, parse_input_shapes(common.input_shapes));
  HS_ASSIGN_OR_RETURN(Graph graph, load_model(model, shapes));
  std::vector<PolicyRow> rows;
  for (const Variant& v : variants_of(profile)) {
    PolicyRow row;
    row.policy = v.name;
    row.alone = v.alone;
    if (Status s = run_variant(graph, v, input_args, measure, row); !s.is_ok()) {
      row.error = first_line(s.message());
      row.islands = 0;
      row.predicted_ms = 0;
    }
    // Two rows of one plan differ only by the noise between two sessions:
    // say so, so a ratio between them is not read as the policy's doing.
    for (const PolicyRow& earlier : rows)
      if (row.error.empty() && earlier.error.empty() && earlier.plan == row.plan) {
        row.same_plan_as = earlier.same_plan_as.empty() ? earlier.policy : earlier.same_plan_as;
        break;
      }
    rows.push_back(std::move(row));
  }
  return rows;
}

bool any_policy_failed(const std::vector<PolicyRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const PolicyRow& r) { return !r.alone && !r.error.empty(); });
}

void print_policy_table(const std::vector<PolicyRow>& rows) {
  const double best = best_measured(rows);
  size_t width = 12;
  for (const PolicyRow& r : rows) width = std::max(width, r.policy.size() + 2);
  const int w = static_cast<int>(width);
  std::printf("\n %-*s %-8s %-13s %-12s %s\n", w, "policy", "islands", "predicted ms", "measured ms",
              "measured / best");
  for (const PolicyRow& r : rows) {
    if (!r.error.empty()) {
      std::printf(" %-*s %-8s %-13s %-12s %-15s %s\n", w, r.policy.c_str(), "n/a", "n/a", "n/a", "n/a",
                  r.error.c_str());
      continue;
    }
    char predicted[32] = "-";  // the plan made no prediction
    if (r.predicted_ms > 0) std::snprintf(predicted, sizeof predicted, "%.3f", r.predicted_ms);
    const double ratio = best > 0 ? r.measured_ms / best : 0.0;
    if (r.same_plan_as.empty())
      std::printf(" %-*s %-8d %-13s %-12.3f %.2f\n", w, r.policy.c_str(), r.islands, predicted, r.measured_ms, ratio);
    else
      std::printf(" %-*s %-8d %-13s %-12.3f %-15.2f same plan as %s\n", w, r.policy.c_str(), r.islands, predicted,
                  r.measured_ms, ratio, r.same_plan_as.c_str());
  }
  // What the predictions rest on, and notes such as "auto = vgf_first until ...".
  for (const PolicyRow& r : rows)
    if (!r.cost_source.empty()) {
      std::printf(" predictions: %s\n", r.cost_source.c_str());
      break;
    }
  // Each note once, with the rows it is about (the *_only rows keep the
  // profile's own policy, so they may share auto's).
  std::vector<std::pair<std::string, std::string>> notes;  // note, rows
  for (const PolicyRow& r : rows) {
    if (r.note.empty() || !r.error.empty()) continue;
    auto it = std::find_if(notes.begin(), notes.end(), [&](const auto& n) { return n.first == r.note; });
    if (it == notes.end())
      notes.emplace_back(r.note, r.policy);
    else
      it->second += ", " + r.policy;
  }
  for (const auto& [note, who] : notes) std::printf(" note (%s): %s\n", who.c_str(), note.c_str());
}

std::string policies_json(const std::vector<PolicyRow>& rows) {
  std::ostringstream j;
  j << "[";
  for (size_t i = 0; i < rows.size(); ++i) {
    const PolicyRow& r = rows[i];
    j << (i ? ", " : "") << "{\"policy\": " << json_quote(r.policy) << ", \"predicted_ms\": ";
    if (r.predicted_ms > 0)
      j << r.predicted_ms;
    else
      j << "null";
    if (r.error.empty())
      j << ", \"measured_ms\": " << r.measured_ms << ", \"islands\": " << r.islands << ", \"same_plan_as\": "
        << (r.same_plan_as.empty() ? "null" : json_quote(r.same_plan_as)) << "}";
    else
      j << ", \"measured_ms\": null, \"islands\": null, \"error\": " << json_quote(r.error) << "}";
  }
  j << "]";
  return j.str();
}

}  // namespace hetsched::cli
