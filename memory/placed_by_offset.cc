#include "memory/placed_by_offset.h"

#include <algorithm>

namespace hetsched::memory {

void PlacedByOffset::sync() {
  if (pending_.empty()) return;
  std::sort(pending_.begin(), pending_.end(), [](const Entry& a, const Entry& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.index < b.index;
  });
  // Merge from the back: the larger of the two tails goes to the free end.
  size_t kept = offset_.size();
  size_t write = kept + pending_.size();
  offset_.resize(write);
  end_.resize(write);
  first_.resize(write);
  last_.resize(write);
  index_.resize(write);
  for (size_t next = pending_.size(); next > 0;) {
    const Entry& e = pending_[next - 1];
    --write;
    if (kept > 0 && (offset_[kept - 1] > e.offset || (offset_[kept - 1] == e.offset && index_[kept - 1] > e.index))) {
      --kept;
      offset_[write] = offset_[kept];
      end_[write] = end_[kept];
      first_[write] = first_[kept];
      last_[write] = last_[kept];
      index_[write] = index_[kept];
    } else {
      offset_[write] = e.offset;
      end_[write] = e.end;
      first_[write] = e.first;
      last_[write] = e.last;
      index_[write] = e.index;
      --next;
    }
  }
  pending_.clear();
}

}  // namespace hetsched::memory
