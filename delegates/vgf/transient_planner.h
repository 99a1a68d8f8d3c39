// Transient memory of a VGF island: every intermediate tensor gets an offset
// in the island's scratch block (memory/arena_planner.h), and tensors whose
// lifetimes, in dispatch order, do not overlap share bytes. A group of
// aliases (a Reshape of a tensor) is one block, alive from the first to the
// last use by any member.
//
// Host-only, so the compiler can size the scratch block without a device
// (Delegate::device_memory) and tests need no GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "delegates/delegate.h"
#include "delegates/vgf/dispatch_plan.h"
#include "delegates/vgf/vgf_format.h"
#include "hetsched/status.h"

namespace hetsched::vgf {

struct TransientLayout {
  std::vector<int64_t> offsets;  // per resource: bytes into the scratch block, -1 for non-intermediates
  uint64_t bytes = 0;            // the scratch block (planned bytes)
  uint64_t lower_bound = 0;      // the most intermediate bytes live at one dispatch
};

// Offsets are multiples of kDeviceArenaAlignment, valid on any device.
// `plan` is plan_dispatches(file), when the caller has it already.
Result<TransientLayout> plan_transients(const VgfFile& file);
Result<TransientLayout> plan_transients(const VgfFile& file, const DispatchPlan& plan);

// What the island needs from a device arena: its scratch block, and its
// inputs and outputs (in their VGF layouts).
DeviceMemoryNeeds vgf_memory_needs(const VgfFile& file, const TransientLayout& transients);

}  // namespace hetsched::vgf
