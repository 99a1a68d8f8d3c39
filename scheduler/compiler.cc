#include "scheduler/compiler.h"

#include <map>

#include "hetsched/version.h"

namespace hetsched {

namespace {
// Program tensors are the values that cross an island boundary or the model
// boundary; values internal to an island stay inside its blob.
class TensorTable {
 public:
  int index_of(const Graph& graph, ValueId v, Program& program) {
    auto it = index_.find(v);
    if (it != index_.end()) return it->second;
    const int idx = static_cast<int>(program.tensors.size());
    program.tensors.push_back({graph.value(v).name, graph.value(v).type});
    index_.emplace(v, idx);
    return idx;
  }

 private:
  std::map<ValueId, int> index_;
};
}  // namespace

Result<Program> compile_program(const Graph& graph, const PartitionPlan& plan, const DelegateSet& delegates,
                                const Profile& profile) {
  Program program;
  program.model_name = graph.name();
  program.profile_name = profile.name;
  program.metadata = {{"hetsched_version", kVersionString},
                      {"policy", plan.policy},
                      {"opset", std::to_string(graph.opset())}};
  TensorTable tensors;
  for (ValueId v : graph.inputs()) program.inputs.push_back(tensors.index_of(graph, v, program));

  for (const PlannedIsland& planned : plan.islands) {
    Delegate* delegate = delegates.find(planned.delegate);
    if (!delegate)
      return internal_error("failed to compile island " + std::to_string(planned.id) + ": delegate '" +
                            planned.delegate + "' is not in the profile's set");
    Island island{planned.id, planned.delegate, &graph, planned.nodes, planned.inputs, planned.outputs};
    const CompileSpecs specs = delegate_options(profile, planned.delegate);
    auto blob = delegate->compile(island, specs);
    if (!blob.is_ok())
      return blob.status().with_context("failed to compile island " + std::to_string(planned.id) + " on " +
                                        planned.delegate + ": ");
    ProgramIsland pi;
    pi.id = planned.id;
    pi.delegate = planned.delegate;
    pi.compile_specs = specs;
    pi.blob = std::move(blob).value();
    for (ValueId v : planned.inputs) pi.inputs.push_back(tensors.index_of(graph, v, program));
    for (ValueId v : planned.outputs) pi.outputs.push_back(tensors.index_of(graph, v, program));
    for (NodeId n : planned.nodes) {
      pi.node_names.push_back(graph.node(n).name);
      pi.op_types.push_back(graph.node(n).op);
    }
    program.islands.push_back(std::move(pi));
    ProgramStep step;
    step.kind = StepKind::kRunIsland;
    step.island = static_cast<int>(program.islands.size()) - 1;
    program.steps.push_back(step);
  }

  for (ValueId v : graph.outputs()) {
    const int idx = tensors.index_of(graph, v, program);
    program.outputs.push_back(idx);
    // A model output that is a constant (no island writes it) travels as data.
    if (graph.value(v).is_constant()) program.constants.emplace_back(idx, *graph.value(v).constant);
  }
  HS_RETURN_IF_ERROR(validate_program(program));
  return program;
}

}  // namespace hetsched
