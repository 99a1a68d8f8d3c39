// The VGF transient-memory planner: greedy best fit by size over lifetimes.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "delegates/vgf/transient_planner.h"

namespace hetsched::vgf {
namespace {

uint64_t aligned(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// A plan is valid when blocks alive at the same step never share bytes,
// every offset is aligned and every block fits in the total.
void expect_valid(const std::vector<TransientBlock>& blocks, const TransientPlan& plan, uint64_t alignment) {
  ASSERT_EQ(plan.offsets.size(), blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << "block " << i;
    EXPECT_LE(plan.offsets[i] + blocks[i].size, plan.total) << "block " << i;
    for (size_t j = i + 1; j < blocks.size(); ++j) {
      const bool same_time = blocks[i].first_step <= blocks[j].last_step && blocks[j].first_step <= blocks[i].last_step;
      const bool same_bytes = plan.offsets[i] < plan.offsets[j] + blocks[j].size &&
                              plan.offsets[j] < plan.offsets[i] + blocks[i].size;
      EXPECT_FALSE(same_time && same_bytes) << "blocks " << i << " and " << j << " are live together and overlap";
    }
  }
}

TEST(TransientPlannerTest, BlocksWithDisjointLifetimesShareAnOffset) {
  const std::vector<TransientBlock> blocks = {{100, 0, 1}, {100, 2, 3}, {60, 4, 4}};
  const TransientPlan plan = plan_transient_memory(blocks, 64);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(plan.total, 128u);
  EXPECT_EQ(max_live_bytes(blocks, 64), 128u);
}

TEST(TransientPlannerTest, ChainOfOverlappingPairsNeedsTwoSlots) {
  // Each intermediate lives from its producer to its consumer.
  const std::vector<TransientBlock> blocks = {{64, 0, 1}, {64, 1, 2}, {64, 2, 3}, {64, 3, 4}};
  const TransientPlan plan = plan_transient_memory(blocks, 64);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 64, 0, 64}));
  EXPECT_EQ(plan.total, 128u);
  EXPECT_EQ(max_live_bytes(blocks, 64), 128u);
}

TEST(TransientPlannerTest, PicksTheSmallestGapThatFits) {
  // Long-lived A, G and K leave two holes for E once the short-lived B and C
  // are dead: [512, 768) of 256 bytes and [960, 1088) of 128. Best fit takes
  // the 128-byte hole (first fit would take the other).
  const std::vector<TransientBlock> blocks = {
      {512, 0, 9},  // A
      {256, 0, 4},  // B
      {192, 0, 9},  // G
      {128, 0, 4},  // C
      {128, 0, 9},  // K
      {128, 5, 9},  // E
  };
  const TransientPlan plan = plan_transient_memory(blocks, 64);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 512, 768, 960, 1088, 960}));
  EXPECT_EQ(plan.total, 1216u);
  EXPECT_EQ(max_live_bytes(blocks, 64), 1216u);
  expect_valid(blocks, plan, 64);
}

TEST(TransientPlannerTest, RoundsSizesUpToTheAlignment) {
  const std::vector<TransientBlock> blocks = {{4, 0, 1}, {4, 0, 1}, {4, 0, 1}};
  const TransientPlan plan = plan_transient_memory(blocks, 256);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 256, 512}));
  EXPECT_EQ(plan.total, 768u);
  EXPECT_EQ(max_live_bytes(blocks, 256), 768u);
}

TEST(TransientPlannerTest, EmptyInputNeedsNoMemory) {
  const TransientPlan plan = plan_transient_memory({}, 16);
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.total, 0u);
  EXPECT_EQ(max_live_bytes({}, 16), 0u);
}

TEST(TransientPlannerTest, RandomPlansAreValidAndAtLeastTheLowerBound) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    const int steps = 1 + static_cast<int>(rng() % 20);
    const size_t count = 1 + rng() % 24;
    std::vector<TransientBlock> blocks;
    uint64_t sum = 0;
    for (size_t i = 0; i < count; ++i) {
      const int a = static_cast<int>(rng() % steps), b = static_cast<int>(rng() % steps);
      blocks.push_back({1 + rng() % 5000, std::min(a, b), std::max(a, b)});
      sum += aligned(blocks.back().size, 16);
    }
    const TransientPlan plan = plan_transient_memory(blocks, 16);
    expect_valid(blocks, plan, 16);
    EXPECT_GE(plan.total, max_live_bytes(blocks, 16));
    EXPECT_LE(plan.total, sum);
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace hetsched::vgf
