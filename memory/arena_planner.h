// The arena planner: gives every buffer of a run an offset in one arena, so
// that buffers never live at the same time share bytes and the arena stays
// close to the fewest bytes any plan needs.
//
// Pure functions over plain values (no Vulkan, no graph), so a delegate or the
// scheduler can plan host or device memory alike and tests need no device.
//
// Failure modes: every function validates its whole input before planning and
// reports the first bad buffer as kInvalidArgument, in the house grammar
// ("failed to plan arena: buffer 'x' has first 5 > last 3"). Nothing is ever
// computed modulo 2^64: an arena that would not fit in uint64 is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "hetsched/status.h"

namespace hetsched::memory {

// One buffer to place in an arena. Steps are positions in execution order;
// only their order matters, so they need not be dense or start at 0.
struct BufferRequest {
  std::string name;         // only for error messages and previews
  uint64_t bytes = 0;       // 0 is allowed: the buffer gets offset 0 and takes no space
  uint64_t alignment = 16;  // a power of two (1 = unaligned); the offset is a multiple of it
  int first = 0;            // first step (inclusive) that touches the buffer
  int last = 0;             // last step (inclusive); first <= last
};

// Extra conflicts beyond lifetimes: returns true when buffers `i` and `j`
// (indices into the request span) must not share bytes although their
// [first, last] intervals are disjoint, e.g. because their steps may run
// concurrently on different queues. Buffers whose intervals intersect always
// conflict; the planner asks only about pairs whose intervals are disjoint.
//
// Must be symmetric and deterministic; either index order may be asked. It is
// called while planning (up to once per such pair and ordering tried, so
// O(n^2) calls in all: keep it cheap) and is not retained after the call.
// An empty function means no extra conflicts.
using ExtraConflicts = std::function<bool(size_t i, size_t j)>;

struct ArenaPlan {
  std::vector<uint64_t> offsets;  // per request, in request order; each a multiple of its alignment
  uint64_t planned_bytes = 0;     // the arena size: max(offset + bytes), 0 when nothing takes space
  // The most bytes live at one step (sum of `bytes` of the buffers whose
  // intervals contain it). No plan can be smaller, so planned_bytes /
  // lower_bound measures the plan; it ignores alignment padding and extra
  // conflicts, which can only raise the true optimum.
  uint64_t lower_bound = 0;
};

// Plans `requests` into one arena. Greedy, as TFLite's and ExecuTorch's
// planners: buffers are placed one by one, each into the smallest aligned
// gap left between the already placed buffers it conflicts with, or above
// them all when no gap fits. Two placement orders are tried and the smaller
// plan is kept (the first on a tie, so the result is deterministic):
//   1. by size: largest first (ties: earlier first step, then lower index);
//   2. by breadth: buffers live at the step with the most live bytes first,
//      largest first within a step (skipped when order 1 already reaches the
//      lower bound).
//
// Cost: O(n log n) plus the placement, which is near O(n log n) when
// lifetimes are short (CNN-like) and O(n^2) at worst, when most buffers
// live together or extra conflicts are given (greedy_placer.h). Measured:
// 10,000 CNN-like buffers in about 20-30 ms.
//
// `requests` and `extra_conflicts` are borrowed for the call only.
// Errors (kInvalidArgument): a buffer with first > last, an alignment that is
// not a power of two, live bytes or an offset + bytes beyond uint64.
[[nodiscard]] Result<ArenaPlan> plan_arena(std::span<const BufferRequest> requests,
                                           const ExtraConflicts& extra_conflicts = {});

// Checks `plan` against `requests`, whoever made it: one offset per request,
// every offset a multiple of its alignment, every buffer inside
// planned_bytes, and no two conflicting buffers (intersecting intervals, or
// `extra_conflicts`) sharing a byte. Returns kInvalidArgument naming the first
// violation ("failed to verify arena plan: buffers 'a' and 'b' overlap ...").
// Cost: O(n log n + p) for p pairs of buffers that share bytes, the only
// pairs it examines (and the only ones it asks `extra_conflicts` about).
[[nodiscard]] Status verify_arena_plan(std::span<const BufferRequest> requests, const ArenaPlan& plan,
                                       const ExtraConflicts& extra_conflicts = {});

}  // namespace hetsched::memory
