// Input checks shared by plan_arena() and verify_arena_plan(), so both refuse
// the same malformed requests with the same words, and the two arithmetic
// helpers every part of the planner must agree on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "hetsched/status.h"
#include "memory/arena_planner.h"

namespace hetsched::memory {

// "'conv1_out'", or "#3" for a buffer without a name, for error messages.
std::string describe_buffer(std::span<const BufferRequest> requests, size_t index);

// Checks every request (first <= last, alignment a power of two) and that the
// indices fit the planner's 32-bit bookkeeping. `action` names the caller's
// verb and object ("plan arena"), so the error reads
// "failed to plan arena: buffer 'x' has first 5 > last 3".
[[nodiscard]] Status validate_requests(std::span<const BufferRequest> requests, std::string_view action);

// True when the [first, last] step intervals of `a` and `b` share a step.
inline bool lifetimes_intersect(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

// `value` rounded up to `alignment` (a power of two) into `out`; false, with
// `out` untouched, when the result would not fit in uint64.
inline bool align_up(uint64_t value, uint64_t alignment, uint64_t& out) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(value, alignment - 1, &sum)) return false;
  out = sum & ~(alignment - 1);
  return true;
}

}  // namespace hetsched::memory
