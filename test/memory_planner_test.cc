// The arena planner (memory/): every plan is checked by verify_arena_plan and
// measured against the lower bound (the most bytes live at one step).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "memory/arena_planner.h"
#include "memory/greedy_placer.h"
#include "memory/live_profile.h"
#include "memory/placement_order.h"

namespace hetsched::memory {
namespace {

constexpr uint64_t kMaxBytes = std::numeric_limits<uint64_t>::max();

BufferRequest buffer(std::string name, uint64_t bytes, int first, int last, uint64_t alignment = 16) {
  BufferRequest r;
  r.name = std::move(name);
  r.bytes = bytes;
  r.alignment = alignment;
  r.first = first;
  r.last = last;
  return r;
}

// Plans, checks the plan with the independent checker and the lower bound,
// and returns it.
ArenaPlan plan_and_verify(const std::vector<BufferRequest>& requests, const ExtraConflicts& extra = {}) {
  Result<ArenaPlan> plan = plan_arena(requests, extra);
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  if (!plan.is_ok()) return {};
  const Status verified = verify_arena_plan(requests, *plan, extra);
  EXPECT_TRUE(verified.is_ok()) << verified.message();
  EXPECT_GE(plan->planned_bytes, plan->lower_bound);
  return std::move(plan).value();
}

void expect_invalid(const Status& status, const std::string& message) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), message);
}

// A ResNet-50-like network at batch 1, float32: a stem, then bottleneck
// blocks whose input stays live over the three convolutions until the
// residual add (the skip connection), with a projection on the skip where a
// stage changes width and halves the resolution. Each op is one step; its
// inputs end and its output starts there.
std::vector<BufferRequest> resnet_like() {
  std::vector<BufferRequest> buffers;
  int step = 0;
  auto produce = [&](const std::string& name, uint64_t channels, uint64_t side) {
    buffers.push_back(buffer(name, channels * side * side * 4, step, step, 64));
    return buffers.size() - 1;
  };
  auto consume = [&](size_t index) { buffers[index].last = step; };

  size_t x = produce("input", 3, 224);
  ++step;
  consume(x);
  x = produce("stem_conv", 64, 112);
  ++step;
  consume(x);
  x = produce("stem_pool", 64, 56);
  ++step;
  const struct {
    uint64_t width, side;
    int blocks;
  } stages[] = {{256, 56, 3}, {512, 28, 4}, {1024, 14, 6}, {2048, 7, 3}};
  for (size_t s = 0; s < std::size(stages); ++s) {
    for (int b = 0; b < stages[s].blocks; ++b) {
      const std::string block = "s" + std::to_string(s) + "b" + std::to_string(b) + "_";
      const uint64_t side = stages[s].side;
      const uint64_t inner = stages[s].width / 4;
      size_t skip = x;
      if (b == 0) {  // projection of the skip to the new width and resolution
        consume(x);
        skip = produce(block + "proj", stages[s].width, side);
        ++step;
      }
      consume(x);
      size_t t = produce(block + "conv1", inner, side);
      ++step;
      consume(t);
      t = produce(block + "conv2", inner, side);
      ++step;
      consume(t);
      t = produce(block + "conv3", stages[s].width, side);
      ++step;
      consume(t);
      consume(skip);
      x = produce(block + "add", stages[s].width, side);
      ++step;
    }
  }
  consume(x);
  x = produce("pool", 2048, 1);
  ++step;
  consume(x);
  x = produce("logits", 1000, 1);
  return buffers;
}

// A CNN-like run of `count` buffers: each lives from its producer to one of
// the next few steps, every tenth is a skip connection live for up to 40
// steps, sizes span 1 KiB to 4 MiB.
std::vector<BufferRequest> random_cnn_like(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<BufferRequest> buffers;
  for (size_t i = 0; i < count; ++i) {
    const int first = static_cast<int>(i);
    const int span = (i % 10 == 9) ? static_cast<int>(rng() % 40) : static_cast<int>(1 + rng() % 3);
    const uint64_t bytes = uint64_t{1024} << (rng() % 13);
    buffers.push_back(buffer("t" + std::to_string(i), bytes + 4 * (rng() % 256), first, first + span, 64));
  }
  return buffers;
}

TEST(ArenaPlannerTest, SharesMemoryWhenLifetimesAreDisjoint) {
  const std::vector<BufferRequest> requests = {buffer("a", 100, 0, 1), buffer("b", 100, 2, 3),
                                               buffer("c", 60, 4, 4)};
  const ArenaPlan plan = plan_and_verify(requests);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(plan.planned_bytes, 100u);
  EXPECT_EQ(plan.lower_bound, 100u);
}

TEST(ArenaPlannerTest, KeepsBuffersApartWhenLifetimesOverlap) {
  // b starts at the step where a ends: both are live at step 2.
  const std::vector<BufferRequest> requests = {buffer("a", 100, 0, 2), buffer("b", 100, 2, 3)};
  const ArenaPlan plan = plan_and_verify(requests);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 112}));  // 100 rounded up to b's 16
  EXPECT_EQ(plan.planned_bytes, 212u);
  EXPECT_EQ(plan.lower_bound, 200u);
}

TEST(ArenaPlannerTest, ChainOfOverlappingPairsNeedsTwoSlots) {
  const std::vector<BufferRequest> requests = {buffer("a", 64, 0, 1), buffer("b", 64, 1, 2), buffer("c", 64, 2, 3),
                                               buffer("d", 64, 3, 4)};
  const ArenaPlan plan = plan_and_verify(requests);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 64, 0, 64}));
  EXPECT_EQ(plan.planned_bytes, 128u);
  EXPECT_EQ(plan.lower_bound, 128u);
}

TEST(ArenaPlannerTest, PicksTheSmallestGapThatFits) {
  // Long-lived A, G and K leave two holes once the short-lived B and C are
  // dead: [512, 768) of 256 bytes and [960, 1088) of 128. Best fit puts E in
  // the 128-byte hole (first fit would take the other).
  const std::vector<BufferRequest> requests = {
      buffer("A", 512, 0, 9, 64), buffer("B", 256, 0, 4, 64), buffer("G", 192, 0, 9, 64),
      buffer("C", 128, 0, 4, 64), buffer("K", 128, 0, 9, 64), buffer("E", 128, 5, 9, 64),
  };
  const ArenaPlan plan = plan_and_verify(requests);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 512, 768, 960, 1088, 960}));
  EXPECT_EQ(plan.planned_bytes, 1216u);
}

TEST(ArenaPlannerTest, KeepsTheBreadthOrderPlanWhenItIsSmaller) {
  // Step 1 is the widest (C + E = 208 bytes). By size, C, E and B go first
  // (C at 0, E above it, B at 0) and leave D, live with E and B, only a
  // 48-byte gap: it goes on top, 272 bytes. By breadth, C and E go first,
  // then D and A reuse C's bytes at step 3, then B fits above D: 208, the
  // lower bound.
  const std::vector<BufferRequest> requests = {buffer("A", 32, 3, 3), buffer("B", 80, 4, 6), buffer("C", 128, 1, 1),
                                               buffer("D", 64, 3, 5), buffer("E", 80, 1, 3)};
  Result<LiveProfile> profile = make_live_profile(requests);
  ASSERT_TRUE(profile.is_ok());
  EXPECT_EQ(place_greedily(requests, order_by_size(requests), {})->planned_bytes, 272u);
  EXPECT_EQ(place_greedily(requests, order_by_breadth(requests, *profile), {})->planned_bytes, 208u);

  const ArenaPlan plan = plan_and_verify(requests);
  EXPECT_EQ(plan.planned_bytes, 208u);
  EXPECT_EQ(plan.lower_bound, 208u);
}

TEST(ArenaPlannerTest, AlignsEachBufferToItsOwnAlignment) {
  const std::vector<BufferRequest> requests = {buffer("a", 3, 0, 5, 1), buffer("b", 3, 0, 5, 1),
                                               buffer("c", 3, 0, 5, 256), buffer("d", 1, 0, 5, 4096),
                                               buffer("e", 5, 0, 5, 8)};
  const ArenaPlan plan = plan_and_verify(requests);
  for (size_t i = 0; i < requests.size(); ++i)
    EXPECT_EQ(plan.offsets[i] % requests[i].alignment, 0u) << requests[i].name << " at " << plan.offsets[i];
  // Unaligned buffers pack without padding.
  EXPECT_EQ(std::max(plan.offsets[0], plan.offsets[1]) - std::min(plan.offsets[0], plan.offsets[1]), 3u);
}

TEST(ArenaPlannerTest, GivesZeroSizeBuffersOffsetZeroAndNoSpace) {
  const std::vector<BufferRequest> requests = {buffer("empty", 0, 0, 9, 4096), buffer("a", 100, 0, 9),
                                               buffer("also_empty", 0, 3, 4, 1)};
  const ArenaPlan plan = plan_and_verify(requests);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(plan.planned_bytes, 100u);
  EXPECT_EQ(plan.lower_bound, 100u);

  const std::vector<BufferRequest> only_empty = {buffer("empty", 0, 0, 0)};
  const ArenaPlan empty_plan = plan_and_verify(only_empty);
  EXPECT_EQ(empty_plan.planned_bytes, 0u);
  EXPECT_EQ(empty_plan.lower_bound, 0u);
}

TEST(ArenaPlannerTest, PlansNoBuffersAsAnEmptyArena) {
  const ArenaPlan plan = plan_and_verify({});
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.planned_bytes, 0u);
  EXPECT_EQ(plan.lower_bound, 0u);
}

TEST(ArenaPlannerTest, KeepsExtraConflictsApartThoughLifetimesAreDisjoint) {
  // a and c run at steps 0 and 2 but may run concurrently (say, on two
  // queues); b may reuse either.
  const std::vector<BufferRequest> requests = {buffer("a", 128, 0, 0), buffer("b", 128, 1, 1),
                                               buffer("c", 128, 2, 2)};
  const ExtraConflicts a_and_c = [](size_t i, size_t j) { return std::min(i, j) == 0 && std::max(i, j) == 2; };
  const ArenaPlan plan = plan_and_verify(requests, a_and_c);
  EXPECT_NE(plan.offsets[0], plan.offsets[2]);
  EXPECT_EQ(plan.planned_bytes, 256u);
  // The same plan without the extra conflict shares everything.
  EXPECT_EQ(plan_and_verify(requests).planned_bytes, 128u);
}

TEST(ArenaPlannerTest, IsDeterministic) {
  const std::vector<BufferRequest> requests = random_cnn_like(500, 7);
  EXPECT_EQ(plan_and_verify(requests).offsets, plan_and_verify(requests).offsets);
}

TEST(ArenaPlannerTest, GivesTheSamePlanWhicheverWayItFindsTheBlockers) {
  // An extra-conflict function that never fires sends every buffer through
  // the pass over all placed buffers instead of the lifetime index; both
  // must visit the blockers in the same order and so agree exactly.
  const std::vector<BufferRequest> requests = random_cnn_like(2000, 11);
  const ExtraConflicts never = [](size_t, size_t) { return false; };
  EXPECT_EQ(plan_and_verify(requests).offsets, plan_and_verify(requests, never).offsets);
}

TEST(ArenaPlannerTest, HandlesStepsAtTheEndsOfTheIntRange) {
  constexpr int kMin = std::numeric_limits<int>::min();
  constexpr int kMax = std::numeric_limits<int>::max();
  const std::vector<BufferRequest> requests = {buffer("all", 64, kMin, kMax), buffer("low", 32, kMin, kMin),
                                               buffer("high", 32, kMax, kMax), buffer("mid", 32, 0, 0)};
  const ArenaPlan plan = plan_and_verify(requests);
  EXPECT_EQ(plan.lower_bound, 96u);
  EXPECT_EQ(plan.planned_bytes, 96u);
  EXPECT_EQ(plan.offsets[1], plan.offsets[2]);
}

TEST(ArenaPlannerTest, RejectsFirstStepAfterLastStep) {
  const std::vector<BufferRequest> requests = {buffer("ok", 8, 0, 1), buffer("x", 8, 5, 3)};
  expect_invalid(plan_arena(requests).status(), "failed to plan arena: buffer 'x' has first 5 > last 3");
  const std::vector<BufferRequest> unnamed = {buffer("", 8, 2, 1)};
  expect_invalid(plan_arena(unnamed).status(), "failed to plan arena: buffer #0 has first 2 > last 1");
}

TEST(ArenaPlannerTest, RejectsAlignmentThatIsNotAPowerOfTwo) {
  expect_invalid(plan_arena(std::vector{buffer("w", 8, 0, 0, 24)}).status(),
                 "failed to plan arena: buffer 'w' has alignment 24, not a power of two");
  expect_invalid(plan_arena(std::vector{buffer("z", 8, 0, 0, 0)}).status(),
                 "failed to plan arena: buffer 'z' has alignment 0, not a power of two");
}

TEST(ArenaPlannerTest, RejectsLiveBytesBeyondUint64) {
  const std::vector<BufferRequest> requests = {buffer("a", kMaxBytes / 2 + 1, 0, 3, 1),
                                               buffer("b", kMaxBytes / 2 + 1, 2, 4, 1)};
  expect_invalid(plan_arena(requests).status(),
                 "failed to plan arena: bytes live at step 2 overflow uint64 (adding buffer 'b')");
}

TEST(ArenaPlannerTest, RejectsOffsetBeyondUint64) {
  // Live bytes fit (each buffer lives alone) but the extra conflict stacks them.
  const std::vector<BufferRequest> stacked = {buffer("a", kMaxBytes / 2 + 1, 0, 0, 1),
                                              buffer("b", kMaxBytes / 2 + 1, 1, 1, 1)};
  const ExtraConflicts always = [](size_t, size_t) { return true; };
  expect_invalid(plan_arena(stacked, always).status(),
                 "failed to plan arena: buffer 'b' of 9223372036854775808 bytes does not fit below 2^64: offset "
                 "overflow");
  // Live bytes fit (2^63 + 1 + 2^62) but b's alignment pushes it past 2^64.
  const std::vector<BufferRequest> padded = {buffer("a", (uint64_t{1} << 63) + 1, 0, 1, 1),
                                             buffer("b", uint64_t{1} << 62, 1, 1, uint64_t{1} << 62)};
  expect_invalid(plan_arena(padded).status(),
                 "failed to plan arena: buffer 'b' of 4611686018427387904 bytes does not fit below 2^64: offset "
                 "overflow");
}

TEST(ArenaPlannerTest, VerifierRejectsBrokenPlans) {
  const std::vector<BufferRequest> requests = {buffer("a", 100, 0, 2), buffer("b", 100, 2, 3)};
  const ArenaPlan good = plan_and_verify(requests);

  ArenaPlan overlapping = good;
  overlapping.offsets = {0, 96};
  expect_invalid(verify_arena_plan(requests, overlapping),
                 "failed to verify arena plan: buffers 'a' and 'b' overlap in bytes [96, 100) despite both live at "
                 "step 2");

  ArenaPlan misaligned = good;
  misaligned.offsets = {0, 104};
  expect_invalid(verify_arena_plan(requests, misaligned),
                 "failed to verify arena plan: buffer 'b' at offset 104 is not aligned to 16");

  ArenaPlan too_small = good;
  too_small.planned_bytes = 200;
  expect_invalid(verify_arena_plan(requests, too_small),
                 "failed to verify arena plan: buffer 'b' ends at 212, past planned_bytes 200");

  ArenaPlan short_plan = good;
  short_plan.offsets.pop_back();
  expect_invalid(verify_arena_plan(requests, short_plan), "failed to verify arena plan: 1 offsets for 2 buffers");

  const std::vector<BufferRequest> disjoint = {buffer("a", 100, 0, 0), buffer("b", 100, 1, 1)};
  const ArenaPlan shared = plan_and_verify(disjoint);
  const ExtraConflicts always = [](size_t, size_t) { return true; };
  expect_invalid(verify_arena_plan(disjoint, shared, always),
                 "failed to verify arena plan: buffers 'a' and 'b' overlap in bytes [0, 100) despite an extra "
                 "conflict");
}

TEST(ArenaPlannerTest, PlansAChainAtTheLowerBound) {
  // A plain CNN: buffer i is written by step i and read by step i + 1.
  std::vector<BufferRequest> equal;
  for (int i = 0; i < 50; ++i) equal.push_back(buffer("t" + std::to_string(i), 4096, i, i + 1));
  const ArenaPlan equal_plan = plan_and_verify(equal);
  EXPECT_EQ(equal_plan.planned_bytes, equal_plan.lower_bound);

  // Sizes halving and doubling, as resolution and width change.
  std::vector<BufferRequest> varying;
  for (int i = 0; i < 50; ++i)
    varying.push_back(buffer("t" + std::to_string(i), uint64_t{4096} << ((i * 7) % 5), i, i + 1, 64));
  const ArenaPlan varying_plan = plan_and_verify(varying);
  std::printf("chain of 50 varying sizes: planned %llu, lower bound %llu (%.3fx)\n",
              static_cast<unsigned long long>(varying_plan.planned_bytes),
              static_cast<unsigned long long>(varying_plan.lower_bound),
              double(varying_plan.planned_bytes) / double(varying_plan.lower_bound));
  EXPECT_LE(varying_plan.planned_bytes, varying_plan.lower_bound * 105 / 100);
}

TEST(ArenaPlannerTest, RandomPlansVerifyAndNeverBeatTheLowerBound) {
  double worst = 1.0;
  double sum = 0.0;
  int counted = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    const size_t count = 1 + rng() % 60;
    const int steps = 1 + static_cast<int>(rng() % 30);
    std::vector<BufferRequest> requests;
    for (size_t i = 0; i < count; ++i) {
      const int a = static_cast<int>(rng() % steps) - 5;  // negative steps are fine
      const int b = a + static_cast<int>(rng() % (1 + rng() % steps));
      const uint64_t bytes = (rng() % 8 == 0) ? 0 : 1 + rng() % 5000;
      requests.push_back(buffer("r" + std::to_string(i), bytes, a, b, uint64_t{1} << (rng() % 9)));
    }
    // Every third instance adds a symmetric extra conflict.
    ExtraConflicts extra;
    if (seed % 3 == 0) extra = [](size_t i, size_t j) { return (i + j) % 5 == 0; };
    SCOPED_TRACE("seed " + std::to_string(seed));
    const ArenaPlan plan = plan_and_verify(requests, extra);
    if (plan.lower_bound > 0 && !extra) {
      const double ratio = double(plan.planned_bytes) / double(plan.lower_bound);
      worst = std::max(worst, ratio);
      sum += ratio;
      ++counted;
    }
  }
  std::printf("300 random instances: planned / lower bound mean %.3f, worst %.3f (without extra conflicts)\n",
              sum / counted, worst);
}

TEST(ArenaPlannerTest, PlansAResNetLikeProfileWithinTenPercentOfTheLowerBound) {
  const std::vector<BufferRequest> requests = resnet_like();
  const ArenaPlan plan = plan_and_verify(requests);
  std::printf("ResNet-like (%zu buffers): planned %llu, lower bound %llu (%.3fx)\n", requests.size(),
              static_cast<unsigned long long>(plan.planned_bytes),
              static_cast<unsigned long long>(plan.lower_bound),
              double(plan.planned_bytes) / double(plan.lower_bound));
  EXPECT_LE(double(plan.planned_bytes), 1.1 * double(plan.lower_bound));
}

// Plans `requests` (10,000 buffers: how long it takes is
// bench/memory_planner_bench's job), prints planned / lower bound, and checks
// the plan with the independent checker.
void plan_large(const std::vector<BufferRequest>& requests, const char* what) {
  Result<ArenaPlan> plan = plan_arena(requests);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  std::printf("%s: planned / lower bound %.3f\n", what, double(plan->planned_bytes) / double(plan->lower_bound));
  const Status verified = verify_arena_plan(requests, *plan);
  EXPECT_TRUE(verified.is_ok()) << verified.message();
}

TEST(ArenaPlannerTest, PlansTenThousandBuffers) {
  const std::vector<BufferRequest> requests = random_cnn_like(10000, 42);
  plan_large(requests, "10,000 CNN-like buffers");
}

TEST(ArenaPlannerTest, PlansTenThousandLongLivedBuffers) {
  // The dense case: lifetimes of up to 2,000 of 5,000 steps, so each buffer
  // conflicts with thousands of others.
  std::mt19937 rng(43);
  std::vector<BufferRequest> requests;
  for (int i = 0; i < 10000; ++i) {
    const int first = static_cast<int>(rng() % 5000);
    requests.push_back(buffer("d" + std::to_string(i), 256 + rng() % 65536, first,
                              first + static_cast<int>(rng() % 2000), 256));
  }
  plan_large(requests, "10,000 long-lived buffers");
}

}  // namespace
}  // namespace hetsched::memory
