#include "memory/placement_order.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace hetsched::memory {

std::vector<uint32_t> order_by_size(std::span<const BufferRequest> requests) {
  std::vector<uint32_t> order(requests.size());
  std::iota(order.begin(), order.end(), uint32_t{0});
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    if (requests[a].first != requests[b].first) return requests[a].first < requests[b].first;
    return a < b;
  });
  return order;
}

namespace {

// Range "widest point" queries over the profile in O(1) after O(m log m)
// set-up (a sparse table), so ordering n buffers costs O(n log n) however
// long their lifetimes are.
class WidestPoint {
 public:
  explicit WidestPoint(const LiveProfile& profile) : live_(profile.live_bytes) {
    const size_t m = live_.size();
    table_.emplace_back(m);
    std::iota(table_[0].begin(), table_[0].end(), uint32_t{0});
    for (size_t width = 2; width <= m; width *= 2) {
      const std::vector<uint32_t>& prev = table_.back();
      std::vector<uint32_t> level(m - width + 1);
      for (size_t p = 0; p < level.size(); ++p) level[p] = wider(prev[p], prev[p + width / 2]);
      table_.push_back(std::move(level));
    }
  }

  // The point in [lo, hi] (inclusive, lo <= hi) with the most live bytes;
  // the earliest one on a tie.
  uint32_t in(size_t lo, size_t hi) const {
    const size_t level = std::bit_width(hi - lo + 1) - 1;
    return wider(table_[level][lo], table_[level][hi + 1 - (size_t{1} << level)]);
  }

 private:
  uint32_t wider(uint32_t a, uint32_t b) const {
    if (live_[a] != live_[b]) return live_[a] > live_[b] ? a : b;
    return std::min(a, b);
  }

  const std::vector<uint64_t>& live_;
  std::vector<std::vector<uint32_t>> table_;  // table_[k][p]: widest point in [p, p + 2^k)
};

}  // namespace

std::vector<uint32_t> order_by_breadth(std::span<const BufferRequest> requests, const LiveProfile& profile) {
  const size_t n = requests.size();
  if (n == 0) return {};
  const WidestPoint widest(profile);
  // Each buffer is placed when its widest step is visited.
  std::vector<uint32_t> step_of(n);
  for (size_t i = 0; i < n; ++i) {
    const auto& points = profile.points;
    const size_t lo = std::lower_bound(points.begin(), points.end(), requests[i].first) - points.begin();
    const size_t hi = std::upper_bound(points.begin(), points.end(), requests[i].last) - points.begin() - 1;
    step_of[i] = widest.in(lo, hi);
  }
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), uint32_t{0});
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const uint64_t live_a = profile.live_bytes[step_of[a]];
    const uint64_t live_b = profile.live_bytes[step_of[b]];
    if (live_a != live_b) return live_a > live_b;
    if (step_of[a] != step_of[b]) return step_of[a] < step_of[b];
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    if (requests[a].first != requests[b].first) return requests[a].first < requests[b].first;
    return a < b;
  });
  return order;
}

}  // namespace hetsched::memory
