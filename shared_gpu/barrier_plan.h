// Which steps of a recorded command buffer need a pipeline barrier before
// them: hazard tracking on the byte ranges each step reads and writes, so
// dispatches that do not depend on each other (the pieces of a Concat, the
// Q, K and V projections of one input) run without a barrier between them.
// Both GPU engines plan their command buffers with it (the Vulkan
// delegate's lowering, the VGF runtime's dispatch plan); host code only, so
// the decisions are tested without a device.
//
// The barriers are global memory barriers (record_memory_barrier): one
// orders every access before it against every access after it, so the
// planner forgets all earlier accesses once it places one. A step waits when
// it
//   - reads bytes an earlier step wrote since the last barrier (RAW),
//   - writes bytes an earlier step read since then (WAR), or
//   - writes bytes an earlier step wrote since then (WAW) — unless both
//     steps belong to one write group and write the same range: the caller
//     vouches that such steps write disjoint parts of it (a Concat's pieces
//     into its output).
// Cost: O(steps × live accesses between barriers).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hetsched::gpu {

// Bytes [begin, end) of one memory space: a buffer, or an arena whose
// sub-ranges several tensors share. Ranges of different spaces never
// overlap.
struct ByteRange {
  uint32_t space = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
  bool overlaps(const ByteRange& other) const {
    return space == other.space && begin < other.end && other.begin < end;
  }
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// What one step (a dispatch, a copy) touches. A range both read and
// written belongs in `writes` (a write is checked against earlier reads).
struct StepAccess {
  std::vector<ByteRange> reads;
  std::vector<ByteRange> writes;
  int write_group = -1;  // >= 0: see the header comment (WAW)
};

// barrier_before[i]: step i must wait for the steps before it. Step 0
// never does (what came before the command buffer is the recorder's own
// leading barrier).
std::vector<bool> plan_barriers(std::span<const StepAccess> steps);

// How many of `barrier_before` are set.
size_t count_barriers(const std::vector<bool>& barrier_before);

}  // namespace hetsched::gpu
