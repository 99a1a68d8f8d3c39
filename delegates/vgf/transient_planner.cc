#include "delegates/vgf/transient_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace hetsched::vgf {

namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

bool overlaps(const TransientBlock& a, const TransientBlock& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

}  // namespace

TransientPlan plan_transient_memory(std::span<const TransientBlock> blocks, uint64_t alignment) {
  TransientPlan plan;
  plan.offsets.assign(blocks.size(), 0);
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (blocks[a].size != blocks[b].size) return blocks[a].size > blocks[b].size;
    return blocks[a].first_step < blocks[b].first_step;
  });

  std::vector<size_t> placed;
  for (size_t index : order) {
    const TransientBlock& block = blocks[index];
    const uint64_t size = align_up(block.size, alignment);
    // The placed blocks alive at the same time, lowest offset first.
    std::vector<size_t> live;
    for (size_t p : placed)
      if (overlaps(blocks[p], block)) live.push_back(p);
    std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });

    uint64_t best_offset = 0;
    uint64_t best_gap = std::numeric_limits<uint64_t>::max();
    uint64_t cursor = 0;
    for (size_t p : live) {
      const uint64_t start = plan.offsets[p];
      if (start >= cursor && start - cursor >= size && start - cursor < best_gap) {
        best_gap = start - cursor;
        best_offset = cursor;
      }
      cursor = std::max(cursor, start + align_up(blocks[p].size, alignment));
    }
    if (best_gap == std::numeric_limits<uint64_t>::max()) best_offset = cursor;
    plan.offsets[index] = best_offset;
    plan.total = std::max(plan.total, best_offset + size);
    placed.push_back(index);
  }
  return plan;
}

uint64_t max_live_bytes(std::span<const TransientBlock> blocks, uint64_t alignment) {
  uint64_t best = 0;
  for (const TransientBlock& at : blocks) {
    // The maximum is reached at some block's first step.
    uint64_t live = 0;
    for (const TransientBlock& b : blocks)
      if (b.first_step <= at.first_step && at.first_step <= b.last_step) live += align_up(b.size, alignment);
    best = std::max(best, live);
  }
  return best;
}

}  // namespace hetsched::vgf
