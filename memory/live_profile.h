// How many bytes are live at each step: the lower bound of every plan, and
// the "breadth" that orders buffers for the greedy-by-breadth placement.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hetsched/status.h"
#include "memory/arena_planner.h"

namespace hetsched::memory {

// The live bytes only grow at some buffer's first step and only shrink after
// a last step, so their maximum over any [first, last] interval is reached at
// one of the first steps inside it. The profile keeps those points only:
// at most one per buffer, however sparse the step numbers are.
struct LiveProfile {
  std::vector<int> points;           // the distinct first steps, ascending
  std::vector<uint64_t> live_bytes;  // per point: sum of bytes of the buffers live there
  uint64_t max_live_bytes = 0;       // the most bytes live at one step (0 without buffers)
};

// Sweeps the requests (already validated) in O(n log n). Fails with
// kInvalidArgument when the bytes live at one step exceed uint64: no arena
// could then hold them.
[[nodiscard]] Result<LiveProfile> make_live_profile(std::span<const BufferRequest> requests);

}  // namespace hetsched::memory
