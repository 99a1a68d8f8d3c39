#include "memory/placed_by_offset.h"

#include <algorithm>

namespace hetsched::memory {

void PlacedByOffset::sync() {
  if (pending_.empty()) return;
  auto below = [](uint64_t offset_a, uint32_t index_a, uint64_t offset_b, uint32_t index_b) {
    return offset_a != offset_b ? offset_a < offset_b : index_a < index_b;
  };
  std::sort(pending_.begin(), pending_.end(),
            [&](const Entry& a, const Entry& b) { return below(a.offset, a.index, b.offset, b.index); });
  size_t kept = offset_.size();
  size_t write = kept + pending_.size();
  offset_.resize(write);
  end_.resize(write);
  first_.resize(write);
  last_.resize(write);
  index_.resize(write);
  // Merge from the back: each pending entry, highest first, goes just below
  // the run of kept entries above it, which moves up as a block (a memmove
  // per column rather than an element at a time).
  for (size_t next = pending_.size(); next > 0; --next) {
    const Entry& e = pending_[next - 1];
    size_t lo = 0;
    size_t hi = kept;
    while (lo < hi) {  // the first kept entry above e
      const size_t mid = (lo + hi) / 2;
      if (below(e.offset, e.index, offset_[mid], index_[mid]))
        hi = mid;
      else
        lo = mid + 1;
    }
    std::copy_backward(offset_.begin() + lo, offset_.begin() + kept, offset_.begin() + write);
    std::copy_backward(end_.begin() + lo, end_.begin() + kept, end_.begin() + write);
    std::copy_backward(first_.begin() + lo, first_.begin() + kept, first_.begin() + write);
    std::copy_backward(last_.begin() + lo, last_.begin() + kept, last_.begin() + write);
    std::copy_backward(index_.begin() + lo, index_.begin() + kept, index_.begin() + write);
    write -= kept - lo + 1;
    kept = lo;
    offset_[write] = e.offset;
    end_[write] = e.end;
    first_[write] = e.first;
    last_[write] = e.last;
    index_[write] = e.index;
  }
  pending_.clear();
}

}  // namespace hetsched::memory
