#include "scheduler/program.h"

#include <cstdint>
#include <set>

namespace hetsched {

std::string_view handoff_kind_name(HandoffKind k) {
  switch (k) {
    case HandoffKind::kHostCopy:
      return "host copy";
    case HandoffKind::kUpload:
      return "upload";
    case HandoffKind::kReadback:
      return "readback";
    case HandoffKind::kDeviceCopy:
      return "device copy";
    case HandoffKind::kAlias:
      return "alias";
  }
  return "unknown handoff";
}

namespace {

// The reason alone, so a loader can put it after "failed to load program file 'x': ".
Status invalid(const std::string& what) { return invalid_argument(what); }

bool in_range(int index, size_t size) { return index >= 0 && static_cast<size_t>(index) < size; }

// `where` names the list, e.g. "island 2 input 0".
Status check_tensor_index(int index, const Program& p, const std::string& where) {
  if (in_range(index, p.tensors.size())) return Status::ok();
  return invalid(where + " refers to tensor " + std::to_string(index) + ", but the program has " +
                 std::to_string(p.tensors.size()) + " tensors");
}

Status check_tensor_list(const std::vector<int>& list, const Program& p, const std::string& where) {
  for (size_t i = 0; i < list.size(); ++i)
    HS_RETURN_IF_ERROR(check_tensor_index(list[i], p, where + " " + std::to_string(i)));
  return Status::ok();
}

}  // namespace

int index_of(const std::vector<int>& list, int tensor) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i] == tensor) return static_cast<int>(i);
  return -1;
}

Status validate_program(const Program& p) {
  std::set<std::string> names;
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const ProgramTensor& t = p.tensors[i];
    if (t.name.empty()) return invalid("program tensor " + std::to_string(i) + " has no name");
    if (!names.insert(t.name).second) return invalid("program tensor name '" + t.name + "' is used twice");
  }

  for (const auto& [index, tensor] : p.constants) {
    HS_RETURN_IF_ERROR(check_tensor_index(index, p, "a constant"));
    const ProgramTensor& t = p.tensors[static_cast<size_t>(index)];
    if (tensor.type() != t.type)
      return invalid("constant for tensor '" + t.name + "' is " + tensor.type().to_string() + ", but the tensor is " +
                     t.type.to_string());
  }

  std::set<int> island_ids;
  for (size_t i = 0; i < p.islands.size(); ++i) {
    const ProgramIsland& island = p.islands[i];
    const std::string where = "island " + std::to_string(i);
    if (island.delegate.empty()) return invalid(where + " names no delegate");
    if (!island_ids.insert(island.id).second) return invalid(where + " repeats island id " + std::to_string(island.id));
    HS_RETURN_IF_ERROR(check_tensor_list(island.inputs, p, where + " input"));
    HS_RETURN_IF_ERROR(check_tensor_list(island.outputs, p, where + " output"));
    if (island.node_names.size() != island.op_types.size())
      return invalid(where + " has " + std::to_string(island.node_names.size()) + " node names but " +
                     std::to_string(island.op_types.size()) + " op types");
  }

  for (size_t i = 0; i < p.steps.size(); ++i) {
    const ProgramStep& step = p.steps[i];
    const std::string where = "step " + std::to_string(i);
    switch (step.kind) {
      case StepKind::kRunIsland:
        if (!in_range(step.island, p.islands.size()))
          return invalid(where + " runs island " + std::to_string(step.island) + ", but the program has " +
                         std::to_string(p.islands.size()) + " islands");
        break;
      case StepKind::kHandoff:
        HS_RETURN_IF_ERROR(check_tensor_index(step.tensor, p, where + " (handoff)"));
        if (step.from.empty() || step.to.empty()) return invalid(where + " (handoff) has no source or destination");
        if (static_cast<uint8_t>(step.handoff) > static_cast<uint8_t>(HandoffKind::kAlias))
          return invalid(where + " has unknown handoff kind " + std::to_string(static_cast<int>(step.handoff)));
        if (step.handoff != HandoffKind::kHostCopy && !in_range(step.island, p.islands.size()))
          return invalid(where + " (" + std::string(handoff_kind_name(step.handoff)) + ") names island " +
                         std::to_string(step.island) + ", but the program has " + std::to_string(p.islands.size()) +
                         " islands");
        break;
      default:
        return invalid(where + " has unknown kind " + std::to_string(static_cast<int>(step.kind)));
    }
  }

  HS_RETURN_IF_ERROR(check_tensor_list(p.inputs, p, "model input"));
  HS_RETURN_IF_ERROR(check_tensor_list(p.outputs, p, "model output"));
  return validate_memory_plan(p);
}

// The plan's offsets are trusted by the session (they become pointers and
// descriptor ranges): every one must lie inside its arena.
Status validate_memory_plan(const Program& p) {
  const MemoryPlan& m = p.memory;
  if (m.domains.empty() && m.host_offsets.empty() && m.islands.empty()) return Status::ok();  // no plan: planned at load
  if (m.domains.empty() || m.domains[0].domain != "host")
    return invalid("the memory plan's first domain must be 'host'");
  if (m.host_offsets.size() != p.tensors.size() || m.islands.size() != p.islands.size())
    return invalid("the memory plan covers " + std::to_string(m.host_offsets.size()) + " tensors and " +
                   std::to_string(m.islands.size()) + " islands, the program has " + std::to_string(p.tensors.size()) +
                   " and " + std::to_string(p.islands.size()));
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const int64_t offset = m.host_offsets[t];
    if (offset < 0) continue;
    const uint64_t bytes = p.tensors[t].type.is_static() ? p.tensors[t].type.byte_size() : UINT64_MAX;
    if (static_cast<uint64_t>(offset) > m.domains[0].planned_bytes ||
        bytes > m.domains[0].planned_bytes - static_cast<uint64_t>(offset))
      return invalid("the memory plan puts tensor '" + p.tensors[t].name + "' at host offset " +
                     std::to_string(offset) + ", past the host arena's " +
                     std::to_string(m.domains[0].planned_bytes) + " bytes");
  }
  for (size_t i = 0; i < m.islands.size(); ++i) {
    const int d = m.islands[i].domain;
    if (d != -1 && (d < 1 || static_cast<size_t>(d) >= m.domains.size()))
      return invalid("the memory plan puts island " + std::to_string(i) + " in domain " + std::to_string(d) +
                     ", but it has " + std::to_string(m.domains.size()) + " domains (the host is 0)");
    // Sizes are the delegate's: it checks its placement at init (check_placement).
  }
  return Status::ok();
}

}  // namespace hetsched
