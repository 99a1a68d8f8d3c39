#include "delegates/vgf/transient_planner.h"

#include <algorithm>
#include <map>

#include "memory/arena_planner.h"

namespace hetsched::vgf {

Result<TransientLayout> plan_transients(const VgfFile& file) { return plan_transients(file, plan_dispatches(file)); }

Result<TransientLayout> plan_transients(const VgfFile& file, const DispatchPlan& dispatches) {
  const auto& resources = file.resources;
  const auto block_key = [&](size_t id) -> int64_t {
    return resources[id].alias_group >= 0 ? -1 - resources[id].alias_group : static_cast<int64_t>(id);
  };
  std::map<int64_t, size_t> block_of;
  std::vector<memory::BufferRequest> blocks;
  int step = 0;
  for (const SegmentDispatches& seg : dispatches.segments) {
    for (const Dispatch& d : seg.dispatches) {
      for (uint32_t id : d.bindings) {
        // Derived buffers (past the resources) are the runtime's own.
        if (id >= resources.size() || resources[id].kind != ResourceKind::kIntermediate) continue;
        auto [it, inserted] = block_of.try_emplace(block_key(id), blocks.size());
        if (inserted) blocks.push_back({resources[id].name, 0, kDeviceArenaAlignment, step, step});
        memory::BufferRequest& block = blocks[it->second];
        block.bytes = std::max(block.bytes, resources[id].bytes());
        block.last = step;
      }
      ++step;
    }
  }
  HS_ASSIGN_OR_RETURN(const memory::ArenaPlan plan, memory::plan_arena(blocks));
  TransientLayout layout;
  layout.offsets.assign(resources.size(), -1);
  for (size_t id = 0; id < resources.size(); ++id) {
    if (resources[id].kind != ResourceKind::kIntermediate) continue;
    auto it = block_of.find(block_key(id));
    if (it != block_of.end()) layout.offsets[id] = static_cast<int64_t>(plan.offsets[it->second]);
  }
  layout.bytes = plan.planned_bytes;
  layout.lower_bound = plan.lower_bound;
  return layout;
}

DeviceMemoryNeeds vgf_memory_needs(const VgfFile& file, const TransientLayout& transients) {
  DeviceMemoryNeeds needs;
  needs.scratch_bytes = transients.bytes;
  needs.scratch_lower_bound = transients.lower_bound;
  for (uint32_t id : file.inputs) {
    needs.input_bytes.push_back(std::max<uint64_t>(file.resources[id].bytes(), 4));
    needs.input_layouts.push_back(file.resources[id].layout);
  }
  for (uint32_t id : file.outputs) {
    needs.output_bytes.push_back(std::max<uint64_t>(file.resources[id].bytes(), 4));
    needs.output_layouts.push_back(file.resources[id].layout);
  }
  return needs;
}

}  // namespace hetsched::vgf
