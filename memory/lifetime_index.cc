#include "memory/lifetime_index.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace hetsched::memory {

LifetimeIndex::LifetimeIndex(std::span<const BufferRequest> requests) : requests_(requests) {
  const size_t n = requests.size();
  by_first_.resize(n);
  std::iota(by_first_.begin(), by_first_.end(), uint32_t{0});
  std::sort(by_first_.begin(), by_first_.end(),
            [&](uint32_t a, uint32_t b) { return requests[a].first < requests[b].first; });
  firsts_.resize(n);
  slot_of_.resize(n);
  for (size_t k = 0; k < n; ++k) {
    firsts_[k] = requests[by_first_[k]].first;
    slot_of_[by_first_[k]] = static_cast<uint32_t>(k);
  }
  sorted_lasts_.resize(n);
  for (size_t i = 0; i < n; ++i) sorted_lasts_[i] = requests[i].last;
  std::sort(sorted_lasts_.begin(), sorted_lasts_.end());
  leaves_ = std::bit_ceil(std::max<size_t>(n, 1));
  latest_.assign(2 * leaves_, kNone);
}

void LifetimeIndex::insert(uint32_t index) {
  const int64_t last = requests_[index].last;
  for (size_t node = leaves_ + slot_of_[index]; node >= 1 && latest_[node] < last; node /= 2) latest_[node] = last;
}

size_t LifetimeIndex::count_all_intersecting(int first, int last) const {
  // Those starting by `last`, less those that ended before `first` (which
  // all started before it too).
  const size_t started = std::upper_bound(firsts_.begin(), firsts_.end(), last) - firsts_.begin();
  const size_t ended = std::lower_bound(sorted_lasts_.begin(), sorted_lasts_.end(), first) - sorted_lasts_.begin();
  return started - ended;
}

bool LifetimeIndex::find_intersecting(int first, int last, size_t limit, std::vector<uint32_t>& out) const {
  // Only slots [0, end) start no later than `last`.
  const size_t end = std::upper_bound(firsts_.begin(), firsts_.end(), last) - firsts_.begin();
  if (end == 0) return true;
  const size_t stop = out.size() + limit;
  // Depth-first over (node, first slot it covers, slots it covers); the
  // depth is log2(leaves_) + 1 <= 33 levels, each leaving at most one pending
  // sibling, so a fixed stack suffices.
  struct Frame {
    size_t node, lo, width;
  };
  Frame stack[72];
  size_t top = 0;
  stack[top++] = {1, 0, leaves_};
  while (top > 0) {
    const Frame f = stack[--top];
    if (f.lo >= end || latest_[f.node] < first) continue;
    if (f.width == 1) {
      if (out.size() == stop) return false;
      out.push_back(by_first_[f.lo]);
      continue;
    }
    const size_t half = f.width / 2;
    stack[top++] = {2 * f.node + 1, f.lo + half, half};
    stack[top++] = {2 * f.node, f.lo, half};
  }
  return true;
}

}  // namespace hetsched::memory
