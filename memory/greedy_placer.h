// The greedy step shared by every placement order: each buffer goes into the
// smallest aligned gap between the placed buffers it conflicts with (best
// fit), or above them all when none fits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hetsched/status.h"
#include "memory/arena_planner.h"

namespace hetsched::memory {

struct Placement {
  std::vector<uint64_t> offsets;  // per request
  uint64_t planned_bytes = 0;     // max(offset + bytes)
};

// Places the validated `requests` in `order` (a permutation of their indices).
// Zero-byte buffers get offset 0 and never block anything.
//
// Cost: finding the conflicting buffers is output-sensitive (LifetimeIndex);
// they are then visited in offset order either by sorting them, O(k log k),
// or, when they are a large share of the placed buffers or extra conflicts
// must be asked, by one pass over all placed buffers kept in offset order,
// O(n). So O(n log n + sum of k log k) on short-lived buffers and O(n^2) at
// worst, never O(n^2 log n).
//
// Fails with kInvalidArgument when a buffer's offset + bytes would exceed
// uint64.
[[nodiscard]] Result<Placement> place_greedily(std::span<const BufferRequest> requests,
                                               std::span<const uint32_t> order,
                                               const ExtraConflicts& extra_conflicts);

}  // namespace hetsched::memory
