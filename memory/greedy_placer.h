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
// Cost, for n buffers of which k block a given one: when the k blockers are
// few (k log k below the number placed, judged from an O(log n) count) they
// come from the LifetimeIndex, O((k + 1) log n), and are sorted by offset;
// otherwise, or whenever extra conflicts must be asked, one pass visits every
// placed buffer in offset order. Each buffer thus costs O(log n + min(k log n,
// n)): near O(n log n) in all on short-lived (CNN-like) buffers, O(n^2) at
// worst (long-lived ones), never O(n^2 log n).
//
// Fails with kInvalidArgument when a buffer's offset + bytes would exceed
// uint64.
[[nodiscard]] Result<Placement> place_greedily(std::span<const BufferRequest> requests,
                                               std::span<const uint32_t> order,
                                               const ExtraConflicts& extra_conflicts);

}  // namespace hetsched::memory
