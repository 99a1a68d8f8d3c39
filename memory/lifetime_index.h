// Finds the placed buffers whose lifetimes intersect a given one, so the
// placer looks at the buffers that can block it rather than at every buffer
// placed so far: on a CNN-like profile (short lifetimes) a query costs
// O((k + 1) log n) for k hits instead of O(n).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "memory/arena_planner.h"

namespace hetsched::memory {

// A static segment tree over the requests sorted by first step; each node
// holds the latest last step among the inserted buffers below it. A buffer
// [f, l] intersects a query [first, last] when f <= last (a prefix of the
// sorted order, found by binary search) and l >= first (the tree prunes every
// subtree whose latest last step is earlier).
//
// Borrows `requests`, which must outlive the index and stay unchanged.
class LifetimeIndex {
 public:
  explicit LifetimeIndex(std::span<const BufferRequest> requests);

  // Makes buffer `index` visible to queries. Each buffer at most once.
  void insert(uint32_t index);

  // Appends to `out`, in no particular order, every inserted buffer whose
  // interval shares a step with [first, last], and returns true. Gives up and
  // returns false as soon as more than `limit` are found (`out` then holds
  // some of them), so a caller with a cheaper plan for many hits never pays
  // the O(k log n) walk for a large k.
  bool find_intersecting(int first, int last, size_t limit, std::vector<uint32_t>& out) const;

  // How many buffers, inserted or not, intersect [first, last]: O(log n), so
  // a caller can guess whether find_intersecting() would pass its limit
  // without walking.
  size_t count_all_intersecting(int first, int last) const;

 private:
  // Below every step, so a subtree without inserted buffers is always pruned.
  static constexpr int64_t kNone = INT64_MIN;

  std::span<const BufferRequest> requests_;
  std::vector<uint32_t> by_first_;  // buffer indices sorted by first step
  std::vector<int> firsts_;         // firsts_[k] == requests_[by_first_[k]].first
  std::vector<int> sorted_lasts_;   // every last step, ascending
  std::vector<uint32_t> slot_of_;   // buffer index -> its position in by_first_
  size_t leaves_ = 1;               // a power of two >= the number of buffers
  std::vector<int64_t> latest_;     // heap-ordered tree (root 1, leaves from leaves_)
};

}  // namespace hetsched::memory
