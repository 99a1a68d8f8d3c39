#include "scheduler/compiler.h"

#include <map>

#include "hetsched/version.h"
#include "scheduler/layout.h"
#include "scheduler/memory_plan.h"

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
  }

  for (ValueId v : graph.outputs()) {
    const int idx = tensors.index_of(graph, v, program);
    program.outputs.push_back(idx);
    // A model output that is a constant (no island writes it) travels as data.
    if (graph.value(v).is_constant()) program.constants.emplace_back(idx, *graph.value(v).constant);
  }
  HS_ASSIGN_OR_RETURN(const auto needs, device_memory_needs(program, delegates));
  HS_ASSIGN_OR_RETURN(program.steps, plan_steps(program, delegates, needs));
  HS_RETURN_IF_ERROR(plan_memory(program, delegates, needs, profile.sync));
  HS_RETURN_IF_ERROR(validate_program(program));
  return program;
}

Result<std::vector<std::optional<DeviceMemoryNeeds>>> device_memory_needs(const Program& program,
                                                                          const DelegateSet& delegates) {
  std::vector<std::optional<DeviceMemoryNeeds>> needs(program.islands.size());
  for (size_t i = 0; i < program.islands.size(); ++i) {
    const ProgramIsland& island = program.islands[i];
    const Delegate* delegate = delegates.find(island.delegate);
    if (!delegate)
      return failed_precondition("failed to plan memory of island " + std::to_string(island.id) + ": it runs on '" +
                                 island.delegate + "', which the profile does not enable");
    if (delegate->memory_kind() != MemoryDomain::Kind::kDevice) continue;
    Result<DeviceMemoryNeeds> n = delegate->device_memory(island.blob, island.compile_specs);
    if (!n.is_ok()) return n.status().with_context("failed to plan memory of island " + std::to_string(island.id) + ": ");
    needs[i] = std::move(n).value();
  }
  return needs;
}

Status plan_memory(Program& program, const DelegateSet& delegates,
                   const std::vector<std::optional<DeviceMemoryNeeds>>& needs, SyncMode sync) {
  std::vector<std::string> domains;
  for (const ProgramIsland& island : program.islands) {
    const Delegate* delegate = delegates.find(island.delegate);
    domains.push_back(delegate ? delegate->resource() : "");
  }
  HS_ASSIGN_OR_RETURN(program.memory, plan_program_memory(program, needs, domains, sync != SyncMode::kNone));
  return Status::ok();
}

namespace {
std::string layout_change(const TensorType& type, TensorLayout from, TensorLayout to) {
  if (from == to || !layout_applies(type)) return "";
  return std::string(tensor_layout_name(from)) + "->" + std::string(tensor_layout_name(to));
}
}  // namespace

Result<std::vector<ProgramStep>> plan_steps(const Program& program, const DelegateSet& delegates,
                                            const std::vector<std::optional<DeviceMemoryNeeds>>& needs) {
  // Layouts of device islands' inputs and outputs, NCHW where the delegate did not say.
  const auto layout_of = [&](int island, int tensor, bool input) {
    if (island < 0 || !needs[island]) return TensorLayout::kNchw;
    const ProgramIsland& pi = program.islands[island];
    const int k = index_of(input ? pi.inputs : pi.outputs, tensor);
    const auto& layouts = input ? needs[island]->input_layouts : needs[island]->output_layouts;
    return k >= 0 && static_cast<size_t>(k) < layouts.size() ? layouts[k] : TensorLayout::kNchw;
  };
  const auto resource_of = [&](int island) {
    const Delegate* d = delegates.find(program.islands[island].delegate);
    return d ? d->resource() : std::string();
  };
  // Where each tensor currently is: -1 on the host, else the index of the
  // device island holding it.
  std::vector<int> on_device(program.tensors.size(), -1);
  std::vector<bool> on_host(program.tensors.size(), false);
  for (int t : program.inputs) on_host[t] = true;
  for (const auto& [t, data] : program.constants) on_host[t] = true;
  const auto label = [&](int island) {
    return island < 0 ? std::string("host") : program.islands[island].delegate + "#" + std::to_string(island);
  };
  std::vector<ProgramStep> steps;
  const auto readback = [&](int t) {
    if (on_host[t]) return;
    ProgramStep s;
    s.kind = StepKind::kHandoff;
    s.handoff = HandoffKind::kReadback;
    s.tensor = t;
    s.island = on_device[t];
    s.from = label(on_device[t]);
    s.to = "host";
    s.layout = layout_change(program.tensors[t].type, layout_of(on_device[t], t, false), TensorLayout::kNchw);
    steps.push_back(s);
    on_host[t] = true;
  };
  for (size_t i = 0; i < program.islands.size(); ++i) {
    const ProgramIsland& island = program.islands[i];
    const Delegate* delegate = delegates.find(island.delegate);
    const bool device = delegate && delegate->memory_kind() == MemoryDomain::Kind::kDevice;
    for (int t : island.inputs) {
      if (!device) {
        readback(t);
        continue;
      }
      ProgramStep s;
      s.kind = StepKind::kHandoff;
      s.tensor = t;
      s.island = static_cast<int>(i);
      s.to = label(static_cast<int>(i));
      const TensorType& type = program.tensors[t].type;
      const TensorLayout to = layout_of(static_cast<int>(i), t, true);
      if (on_device[t] >= 0) {
        const TensorLayout from = layout_of(on_device[t], t, false);
        // One context and one layout: the reader uses the writer's bytes.
        const bool alias = resource_of(on_device[t]) == resource_of(static_cast<int>(i)) &&
                           (from == to || !layout_applies(type));
        s.handoff = alias ? HandoffKind::kAlias : HandoffKind::kDeviceCopy;
        s.from = label(on_device[t]);
        s.layout = layout_change(type, from, to);
      } else {
        s.handoff = HandoffKind::kUpload;
        s.from = "host";
        s.layout = layout_change(type, TensorLayout::kNchw, to);
      }
      steps.push_back(s);
    }
    ProgramStep run;
    run.kind = StepKind::kRunIsland;
    run.island = static_cast<int>(i);
    steps.push_back(run);
    for (int t : island.outputs) {
      on_device[t] = device ? static_cast<int>(i) : -1;
      on_host[t] = !device;
    }
  }
  for (int t : program.outputs) readback(t);
  return steps;
}

}  // namespace hetsched
