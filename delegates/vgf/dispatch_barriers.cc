#include "delegates/vgf/dispatch_barriers.h"

#include <algorithm>

#include "shared_gpu/barrier_plan.h"

namespace hetsched::vgf {

std::vector<bool> plan_dispatch_barriers(const VgfFile& file, const DispatchPlan& plan,
                                         const TransientLayout& transients) {
  const auto range_of = [&](uint32_t id) -> gpu::ByteRange {
    if (id < file.resources.size() && file.resources[id].kind == ResourceKind::kIntermediate &&
        transients.offsets[id] >= 0) {
      const uint64_t begin = static_cast<uint64_t>(transients.offsets[id]);
      return {0, begin, begin + std::max<uint64_t>(file.resources[id].bytes(), 4)};
    }
    const uint64_t bytes =
        id < file.resources.size() ? file.resources[id].bytes() : plan.derived[id - file.resources.size()].bytes();
    return {id + 1, 0, std::max<uint64_t>(bytes, 4)};
  };
  std::vector<gpu::StepAccess> access;
  for (const SegmentDispatches& seg : plan.segments)
    for (const Dispatch& d : seg.dispatches) {
      gpu::StepAccess a;
      for (uint32_t id : d.bindings) {
        const bool written = std::find(d.writes.begin(), d.writes.end(), id) != d.writes.end();
        (written ? a.writes : a.reads).push_back(range_of(id));
      }
      a.write_group = d.write_group;
      access.push_back(std::move(a));
    }
  return gpu::plan_barriers(access);
}

}  // namespace hetsched::vgf
