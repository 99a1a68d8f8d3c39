// Transient memory of a VGF session: every intermediate tensor gets an
// offset in one device allocation, and tensors whose lifetimes do not
// overlap share bytes.
//
// Pure functions over plain values, so the plan can be tested without a GPU.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hetsched::vgf {

// One intermediate: its size and the first and last step (inclusive) that
// touch it.
struct TransientBlock {
  uint64_t size = 0;
  int first_step = 0;
  int last_step = 0;
};

struct TransientPlan {
  std::vector<uint64_t> offsets;  // per block, multiples of the alignment
  uint64_t total = 0;             // bytes of the one allocation
};

// Greedy best fit by size: blocks are placed largest first (ties: earlier
// first step, then lower index); each goes into the smallest gap between the
// already placed blocks whose lifetimes overlap its own, or above all of them
// when no gap fits. Sizes are rounded up to `alignment` (a power of two).
TransientPlan plan_transient_memory(std::span<const TransientBlock> blocks, uint64_t alignment);

// The lower bound any plan needs: the most (aligned) bytes live at one step.
uint64_t max_live_bytes(std::span<const TransientBlock> blocks, uint64_t alignment);

}  // namespace hetsched::vgf
