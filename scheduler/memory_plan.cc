#include "scheduler/memory_plan.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "memory/arena_planner.h"
#include "memory/live_profile.h"
#include "scheduler/step_graph.h"

namespace hetsched {

namespace {

// Host tensors are aligned for any SIMD load the CPU kernels make.
constexpr uint64_t kHostAlignment = 64;

// A buffer while its steps are collected.
struct Pending {
  std::string name;
  uint64_t bytes = 0;
  uint64_t bound_bytes = 0;  // what it adds to the lower bound (scratch: the delegate's own bound)
  std::vector<int> steps;    // every step that touches it, ascending
  bool merged = false;       // an alias reader's input, merged into the writer's output
};

// Plans one domain's buffers with the DAG's order as the only reuse licence.
Result<DomainPlan> plan_domain(std::string name, const std::vector<Pending>& buffers, uint64_t alignment,
                               const StepGraph& graph, bool reuse, std::vector<int>& index_in_plan) {
  std::vector<memory::BufferRequest> requests, bound_requests;
  std::vector<const Pending*> placed;
  index_in_plan.assign(buffers.size(), -1);
  for (size_t b = 0; b < buffers.size(); ++b) {
    const Pending& p = buffers[b];
    if (p.merged || p.steps.empty()) continue;
    index_in_plan[b] = static_cast<int>(requests.size());
    requests.push_back({p.name, p.bytes, alignment, p.steps.front(), p.steps.back()});
    bound_requests.push_back({p.name, p.bound_bytes, 1, p.steps.front(), p.steps.back()});
    placed.push_back(&p);
  }
  // Disjoint in program order is not enough: the later buffer's first
  // writer must wait for every step of the earlier one.
  const auto conflicts = [&](size_t i, size_t j) {
    if (!reuse) return true;
    const Pending& a = *placed[i];
    const Pending& b = *placed[j];
    const Pending& earlier = a.steps.back() < b.steps.front() ? a : b;
    const Pending& later = &earlier == &a ? b : a;
    for (int s : earlier.steps)
      if (!graph.reaches(s, later.steps.front())) return true;
    return false;
  };
  HS_ASSIGN_OR_RETURN(const memory::ArenaPlan arena, memory::plan_arena(requests, conflicts));
  HS_ASSIGN_OR_RETURN(const memory::LiveProfile bound, memory::make_live_profile(bound_requests));
  DomainPlan plan;
  plan.domain = std::move(name);
  plan.planned_bytes = arena.planned_bytes;
  plan.lower_bound = bound.max_live_bytes;
  for (size_t i = 0; i < requests.size(); ++i)
    plan.buffers.push_back({requests[i].name, arena.offsets[i], requests[i].bytes, requests[i].first, requests[i].last});
  return plan;
}

}  // namespace

Result<MemoryPlan> plan_program_memory(const Program& program, const std::vector<std::optional<DeviceMemoryNeeds>>& needs,
                                       const std::vector<std::string>& domains, bool device_reuse) {
  const size_t islands = program.islands.size();
  if (needs.size() != islands || domains.size() != islands)
    return internal_error("failed to plan memory: needs for " + std::to_string(needs.size()) + " islands, the program has " +
                          std::to_string(islands));
  std::vector<bool> device(islands);
  for (size_t i = 0; i < islands; ++i) device[i] = needs[i].has_value();
  const StepGraph graph = build_step_graph(program, device);

  MemoryPlan plan;
  plan.host_offsets.assign(program.tensors.size(), -1);
  plan.islands.resize(islands);
  std::vector<std::string> domain_names{"host"};
  std::vector<std::vector<Pending>> buffers(1);

  // Host: one buffer per tensor that reaches the host, but not the caller's or the program's own.
  std::vector<bool> outside(program.tensors.size(), false);
  for (int t : program.inputs) outside[t] = true;
  for (int t : program.outputs) outside[t] = true;
  for (const auto& [t, data] : program.constants) outside[t] = true;
  std::vector<int> host_buffer(program.tensors.size(), -1);
  const auto touch_host = [&](int t, int s) -> Status {
    if (outside[t]) return Status::ok();
    if (host_buffer[t] < 0) {
      const TensorType& type = program.tensors[t].type;
      if (!type.is_static())
        return invalid_argument("failed to plan memory: tensor '" + program.tensors[t].name + "' has no static shape");
      host_buffer[t] = static_cast<int>(buffers[0].size());
      buffers[0].push_back({program.tensors[t].name, type.byte_size(), type.byte_size(), {}, false});
    }
    buffers[0][host_buffer[t]].steps.push_back(s);
    return Status::ok();
  };

  // Device: per island, its scratch, inputs and outputs.
  using Key = std::tuple<int, int, int>;  // island, 0 scratch / 1 input / 2 output, index
  std::map<Key, int> device_buffer;        // → index in its domain's buffers
  for (size_t i = 0; i < islands; ++i) {
    if (!device[i]) continue;
    const ProgramIsland& island = program.islands[i];
    const DeviceMemoryNeeds& n = *needs[i];
    if (n.input_bytes.size() != island.inputs.size() || n.output_bytes.size() != island.outputs.size())
      return internal_error("failed to plan memory: island " + std::to_string(island.id) + " needs memory for " +
                            std::to_string(n.input_bytes.size()) + " inputs and " +
                            std::to_string(n.output_bytes.size()) + " outputs, it has " +
                            std::to_string(island.inputs.size()) + " and " + std::to_string(island.outputs.size()));
    auto it = std::find(domain_names.begin(), domain_names.end(), domains[i]);
    const int d = static_cast<int>(it - domain_names.begin());
    if (it == domain_names.end()) {
      domain_names.push_back(domains[i]);
      buffers.emplace_back();
    }
    plan.islands[i].domain = d;
    const std::string label = island.delegate + "#" + std::to_string(island.id);
    device_buffer[{static_cast<int>(i), 0, 0}] = static_cast<int>(buffers[d].size());
    buffers[d].push_back({label + " scratch", n.scratch_bytes, n.scratch_lower_bound, {}, false});
    for (size_t k = 0; k < island.inputs.size(); ++k) {
      device_buffer[{static_cast<int>(i), 1, static_cast<int>(k)}] = static_cast<int>(buffers[d].size());
      const std::string name = program.tensors[island.inputs[k]].name + " (" + label + " in)";
      buffers[d].push_back({name, n.input_bytes[k], n.input_bytes[k], {}, false});
    }
    for (size_t k = 0; k < island.outputs.size(); ++k) {
      device_buffer[{static_cast<int>(i), 2, static_cast<int>(k)}] = static_cast<int>(buffers[d].size());
      const std::string name = program.tensors[island.outputs[k]].name + " (" + label + " out)";
      buffers[d].push_back({name, n.output_bytes[k], n.output_bytes[k], {}, false});
    }
  }
  const auto device_key = [&](int island, bool input, int tensor) -> Result<Key> {
    const ProgramIsland& pi = program.islands[island];
    const int k = index_of(input ? pi.inputs : pi.outputs, tensor);
    if (!device[island] || k < 0)
      return invalid_argument("failed to plan memory: island " + std::to_string(pi.id) + " has no device " +
                              (input ? "input '" : "output '") + program.tensors[tensor].name + "'");
    return Key{island, input ? 1 : 2, k};
  };
  const auto touch_device = [&](const Key& key, int s) {
    const int d = plan.islands[std::get<0>(key)].domain;
    buffers[d][device_buffer[key]].steps.push_back(s);
  };

  std::vector<int> producer(program.tensors.size(), -1);
  for (size_t i = 0; i < islands; ++i)
    for (int t : program.islands[i].outputs) producer[t] = static_cast<int>(i);
  for (size_t si = 0; si < program.steps.size(); ++si) {
    const int s = static_cast<int>(si);
    const ProgramStep& step = program.steps[si];
    if (step.kind == StepKind::kRunIsland) {
      const ProgramIsland& island = program.islands[step.island];
      if (device[step.island]) {
        touch_device({step.island, 0, 0}, s);
        for (size_t k = 0; k < island.inputs.size(); ++k) touch_device({step.island, 1, static_cast<int>(k)}, s);
        for (size_t k = 0; k < island.outputs.size(); ++k) touch_device({step.island, 2, static_cast<int>(k)}, s);
      } else {
        for (int t : island.inputs) HS_RETURN_IF_ERROR(touch_host(t, s));
        for (int t : island.outputs) HS_RETURN_IF_ERROR(touch_host(t, s));
      }
      continue;
    }
    switch (step.handoff) {
      case HandoffKind::kUpload: {
        HS_RETURN_IF_ERROR(touch_host(step.tensor, s));
        HS_ASSIGN_OR_RETURN(const Key to, device_key(step.island, true, step.tensor));
        touch_device(to, s);
        break;
      }
      case HandoffKind::kReadback: {
        HS_ASSIGN_OR_RETURN(const Key from, device_key(step.island, false, step.tensor));
        touch_device(from, s);
        HS_RETURN_IF_ERROR(touch_host(step.tensor, s));
        break;
      }
      case HandoffKind::kDeviceCopy:
      case HandoffKind::kAlias: {
        if (producer[step.tensor] < 0)
          return invalid_argument("failed to plan memory: no island writes '" + program.tensors[step.tensor].name + "'");
        HS_ASSIGN_OR_RETURN(const Key from, device_key(producer[step.tensor], false, step.tensor));
        HS_ASSIGN_OR_RETURN(const Key to, device_key(step.island, true, step.tensor));
        if (step.handoff == HandoffKind::kAlias) {
          const int d = plan.islands[step.island].domain;
          if (plan.islands[std::get<0>(from)].domain != d)
            return invalid_argument("failed to plan memory: '" + program.tensors[step.tensor].name +
                                    "' is aliased between islands on different GPU contexts");
          buffers[d][device_buffer[to]].merged = true;
          device_buffer[to] = device_buffer[from];
        }
        touch_device(from, s);
        if (step.handoff == HandoffKind::kDeviceCopy) touch_device(to, s);
        // Between two GPU contexts a copy goes through the host (a readback,
        // then an upload: handoff.h), which needs the tensor's host slot.
        if (step.handoff == HandoffKind::kDeviceCopy &&
            plan.islands[std::get<0>(from)].domain != plan.islands[step.island].domain)
          HS_RETURN_IF_ERROR(touch_host(step.tensor, s));
        break;
      }
      case HandoffKind::kHostCopy:
        HS_RETURN_IF_ERROR(touch_host(step.tensor, s));
        break;
    }
  }

  std::vector<std::vector<int>> index_in_plan(buffers.size());
  for (size_t d = 0; d < buffers.size(); ++d) {
    Result<DomainPlan> domain = plan_domain(domain_names[d], buffers[d], d == 0 ? kHostAlignment : kDeviceArenaAlignment,
                                            graph, d == 0 || device_reuse, index_in_plan[d]);
    if (!domain.is_ok()) return domain.status().with_context("failed to plan " + domain_names[d] + " memory: ");
    plan.domains.push_back(std::move(domain).value());
  }
  for (size_t t = 0; t < program.tensors.size(); ++t)
    if (host_buffer[t] >= 0 && index_in_plan[0][host_buffer[t]] >= 0)
      plan.host_offsets[t] = static_cast<int64_t>(plan.domains[0].buffers[index_in_plan[0][host_buffer[t]]].offset);
  const auto offset_of = [&](const Key& key) {
    const int d = plan.islands[std::get<0>(key)].domain;
    const int b = index_in_plan[d][device_buffer[key]];
    return b < 0 ? uint64_t{0} : plan.domains[d].buffers[b].offset;
  };
  for (size_t i = 0; i < islands; ++i) {
    if (!device[i]) continue;
    IslandPlacementPlan& p = plan.islands[i];
    p.scratch_offset = offset_of({static_cast<int>(i), 0, 0});
    for (size_t k = 0; k < program.islands[i].inputs.size(); ++k)
      p.input_offsets.push_back(offset_of({static_cast<int>(i), 1, static_cast<int>(k)}));
    for (size_t k = 0; k < program.islands[i].outputs.size(); ++k)
      p.output_offsets.push_back(offset_of({static_cast<int>(i), 2, static_cast<int>(k)}));
  }
  return plan;
}

}  // namespace hetsched
