// shared_gpu/barrier_plan.h: which steps wait, on byte ranges (the GPU half,
// synchronization validation catching a barrier left out, is in
// shared_gpu_helpers_test).
#include "shared_gpu/barrier_plan.h"

#include <gtest/gtest.h>

#include <vector>


namespace hetsched {
namespace {

using gpu::ByteRange;
using gpu::StepAccess;

StepAccess access(std::vector<ByteRange> reads, std::vector<ByteRange> writes, int group = -1) {
  return StepAccess{std::move(reads), std::move(writes), group};
}

TEST(BarrierPlanTest, IndependentStepsShareNoBarrier) {
  // Two dispatches reading one input into two outputs, then one reading both.
  const ByteRange in{1, 0, 64}, a{0, 0, 64}, b{0, 256, 320}, out{2, 0, 64};
  const std::vector<StepAccess> steps = {access({in}, {a}), access({in}, {b}), access({a, b}, {out})};
  EXPECT_EQ(gpu::plan_barriers(steps), (std::vector<bool>{false, false, true}));
}

TEST(BarrierPlanTest, ReadAfterWriteWaits) {
  const ByteRange x{0, 0, 16}, y{0, 16, 32};
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({}, {x}), access({x}, {y})}),
            (std::vector<bool>{false, true}));
  // Overlapping by one byte is a hazard; touching ends are not.
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({}, {{0, 0, 17}}), access({y}, {{3, 0, 4}})}),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({}, {x}), access({y}, {{3, 0, 4}})}),
            (std::vector<bool>{false, false}));
}

TEST(BarrierPlanTest, WriteAfterReadAndWriteAfterWriteWait) {
  const ByteRange x{0, 0, 16}, other{1, 0, 16};
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({x}, {other}), access({}, {x})}),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({}, {x}), access({}, {x})}),
            (std::vector<bool>{false, true}));
}

TEST(BarrierPlanTest, RangesOfDifferentSpacesNeverOverlap) {
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({}, {{0, 0, 16}}), access({{1, 0, 16}}, {{2, 0, 8}})}),
            (std::vector<bool>{false, false}));
}

TEST(BarrierPlanTest, PiecesOfOneWriteGroupDoNotWaitForEachOther) {
  const ByteRange out{0, 0, 128}, a{1, 0, 64}, b{2, 0, 64};
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({a}, {out}, 7), access({b}, {out}, 7)}),
            (std::vector<bool>{false, false}));
  // Another group, or no group, writing the same range waits.
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({a}, {out}, 7), access({b}, {out}, 8)}),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({a}, {out}, 7), access({b}, {out})}),
            (std::vector<bool>{false, true}));
  // One group writing two overlapping ranges (not pieces of one buffer) waits.
  EXPECT_EQ(gpu::plan_barriers(std::vector<StepAccess>{access({a}, {out}, 7), access({b}, {{0, 64, 192}}, 7)}),
            (std::vector<bool>{false, true}));
}

TEST(BarrierPlanTest, ABarrierClearsWhatCameBefore) {
  // Step 2 waits for step 1; step 3 reads what step 0 wrote, already
  // ordered by that barrier.
  const ByteRange w0{0, 0, 16}, w1{0, 16, 32}, r{1, 0, 16}, w3{2, 0, 16};
  const std::vector<StepAccess> steps = {access({r}, {w0}), access({r}, {w1}), access({w1}, {{3, 0, 4}}),
                                         access({w0}, {w3})};
  const std::vector<bool> barriers = gpu::plan_barriers(steps);
  EXPECT_EQ(barriers, (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(gpu::count_barriers(barriers), 1u);
}

}  // namespace
}  // namespace hetsched
