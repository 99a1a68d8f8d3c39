// The barriers of a VGF island's command buffer: the byte ranges each
// planned dispatch reads and writes, where the runtime places them, run
// through the hazard tracking both GPU engines share
// (shared_gpu/barrier_plan.h). GPU-free, so `hetsched preview` counts what
// the runtime records.
#pragma once

#include <vector>

#include "delegates/vgf/dispatch_plan.h"
#include "delegates/vgf/transient_planner.h"
#include "delegates/vgf/vgf_format.h"

namespace hetsched::vgf {

// barrier_before per dispatch, all segments' dispatches in plan order.
// Intermediates share the scratch block at `transients`' offsets (an alias
// group is one block); every other resource and derived buffer is memory
// of its own.
std::vector<bool> plan_dispatch_barriers(const VgfFile& file, const DispatchPlan& plan,
                                         const TransientLayout& transients);

}  // namespace hetsched::vgf
