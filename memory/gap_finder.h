// Best fit for one buffer: the smallest aligned gap between the placed
// buffers that block it, else the first aligned offset above them all.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "memory/request_checks.h"

namespace hetsched::memory {

// Fed the blocking buffers in ascending (offset, index) order; among equal
// gaps it keeps the lowest, so the result depends only on that order.
class GapFinder {
 public:
  // `bytes` > 0 (zero-byte buffers are never placed); `alignment` a power of two.
  GapFinder(uint64_t bytes, uint64_t alignment) : bytes_(bytes), alignment_(alignment) {}

  // Written without branches: whether a gap fits is close to random along
  // the blockers, so a branch on it would often be mispredicted.
  void visit(uint64_t offset, uint64_t end) {
    uint64_t padded = 0;
    // A gap whose aligned start would overflow cannot fit anything.
    const bool overflows = __builtin_add_overflow(cursor_, alignment_ - 1, &padded);
    const uint64_t start = padded & ~(alignment_ - 1);
    const uint64_t gap = offset - start;
    // bytes_ > 0, so gap >= bytes_ also means offset > start >= cursor_.
    const bool better = !overflows & (offset >= start) & (gap >= bytes_) & (gap < best_gap_);
    best_gap_ = better ? gap : best_gap_;
    best_offset_ = better ? start : best_offset_;
    cursor_ = std::max(cursor_, end);
  }

  // No later gap can beat one that fits exactly (and later ones lie higher).
  bool found_exact_fit() const { return best_gap_ == bytes_; }

  // The chosen offset into `offset`; false when, above every blocking
  // buffer, the buffer would end past uint64.
  bool result(uint64_t& offset) const {
    if (best_gap_ != kNoGap) {
      offset = best_offset_;
      return true;
    }
    uint64_t end = 0;
    return align_up(cursor_, alignment_, offset) && !__builtin_add_overflow(offset, bytes_, &end);
  }

 private:
  static constexpr uint64_t kNoGap = std::numeric_limits<uint64_t>::max();

  uint64_t bytes_;
  uint64_t alignment_;
  uint64_t cursor_ = 0;  // the highest end among the blocking buffers visited
  uint64_t best_gap_ = kNoGap;
  uint64_t best_offset_ = 0;
};

}  // namespace hetsched::memory
