// hetsched bench --compare-policies: the model under every partition policy
// and under each enabled delegate alone, each timed the way bench times one
// profile, so a policy's prediction can be held against what it measures.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "graph/tensor.h"
#include "profile/profile.h"
#include "scheduler/session.h"

namespace hetsched::cli {

// The p50 latency (ms) of bench's requests on `session` with `inputs`.
using MeasureP50 = std::function<Result<double>(Session& session, const std::vector<Tensor>& inputs)>;

struct PolicyRow {
  std::string policy;       // "auto", "vgf_first", ..., the profile's own list, "vulkan_only", ...
  bool alone = false;       // one delegate alone: it may not cover the model
  int islands = 0;
  double predicted_ms = 0;  // 0: the plan came without a prediction
  double measured_ms = 0;   // p50 latency
  std::string note;         // the plan's policy note ("auto = vgf_first until ...")
  std::string cost_source;  // where the prediction's figures came from
  std::string error;        // non-empty: the row could not be planned or run (one line)
  std::string plan;         // every node's delegate, in node order: rows with equal plans run the same program
  std::string same_plan_as; // the first earlier row with this plan, or ""
};

// An error unless `model` can be partitioned anew: a compiled program's
// partition is fixed.
Status check_comparable(const std::string& model);

// Plans, compiles and times `model` once per row: auto, vgf_first,
// vulkan_first, cpu_first (and the profile's own list when it has one),
// then each enabled delegate alone. Everything else in `profile` (pins,
// pruning, threads, in flight) is kept. A row that fails gets its error;
// the others still run. An error only when the model cannot be loaded or
// check_comparable refuses it.
Result<std::vector<PolicyRow>> compare_policies(const Profile& profile, const CommonOptions& common,
                                                const std::string& model, const std::vector<std::string>& input_args,
                                                const MeasureP50& measure);

// Whether a row that had to run failed (a policy row; one delegate alone may fail).
bool any_policy_failed(const std::vector<PolicyRow>& rows);

// policy | islands | predicted ms | measured ms | measured / best, then notes.
void print_policy_table(const std::vector<PolicyRow>& rows);
// The JSON array of {policy, predicted_ms, measured_ms, islands} (null where
// unknown; "error" on rows that could not run).
std::string policies_json(const std::vector<PolicyRow>& rows);

}  // namespace hetsched::cli
