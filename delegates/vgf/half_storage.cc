#include "delegates/vgf/half_storage.h"

#include <map>
#include <vector>

#include "delegates/vgf/dispatch_plan.h"

namespace hetsched::vgf {

namespace {

bool is_cast(Kernel k) {
  return k == Kernel::kCastF16ToF32 || k == Kernel::kCastF32ToF16 || k == Kernel::kCastWords ||
         k == Kernel::kCastToBool || k == Kernel::kCastFromBool;
}

}  // namespace

std::set<uint32_t> choose_half_resources(const VgfFile& file) {
  const auto& resources = file.resources;
  std::vector<bool> pinned(resources.size(), false);
  for (size_t id = 0; id < resources.size(); ++id) {
    const Resource& r = resources[id];
    pinned[id] = r.kind != ResourceKind::kIntermediate || r.dtype != DType::kFloat32 || r.elements() == 0;
  }
  // The tensor-core plan binds the same resources in the same places. A
  // resource any kernel binds where it reads or writes only f32 (a cast, a
  // compute module, a built-in's f32-only binding) keeps f32.
  for (const SegmentDispatches& seg : plan_dispatches(file).segments)
    for (const Dispatch& d : seg.dispatches) {
      const uint32_t capable = d.kernel == Kernel::kCustom || is_cast(d.kernel) ? 0u : kernel_half_capable_bindings(d.kernel);
      for (size_t b = 0; b < d.bindings.size(); ++b)
        if (d.bindings[b] < resources.size() && (b >= 32 || (capable >> b & 1u) == 0)) pinned[d.bindings[b]] = true;
    }
  // A group is kept whole: one pinned member pins all.
  std::map<int32_t, bool> group_pinned;
  for (size_t id = 0; id < resources.size(); ++id)
    if (resources[id].alias_group >= 0) group_pinned[resources[id].alias_group] |= pinned[id];
  std::set<uint32_t> half;
  for (size_t id = 0; id < resources.size(); ++id) {
    const int32_t group = resources[id].alias_group;
    if (!pinned[id] && (group < 0 || !group_pinned[group])) half.insert(static_cast<uint32_t>(id));
  }
  return half;
}

VgfFile with_half_storage(const VgfFile& file) {
  VgfFile out = file;
  for (uint32_t id : choose_half_resources(file)) out.resources[id].dtype = DType::kFloat16;
  return out;
}

}  // namespace hetsched::vgf
