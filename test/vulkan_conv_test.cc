// conv2d.comp's tilings: how they are chosen and parsed, how the lowering
// lays out weights and split-K steps, and every tiling's results against
// the portable CPU kernels on lavapipe (with validation).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "delegates/vulkan/conv_tiling.h"
#include "delegates/vulkan/kernel_params.h"
#include "delegates/vulkan/lowering.h"
#include "delegates/vulkan/vulkan_delegate.h"
#include "delegates/vulkan/vulkan_island.h"
#include "graph/builder.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vulkan {
namespace {

using hetsched::testing::random_tensor;
using Ints = std::vector<int64_t>;

// --- choosing and parsing ----------------------------------------------------

TEST(ConvTilingTest, ParsesChannelsPixelsAndSplits) {
  Result<ConvTiling> t = parse_conv_tiling("128x64/4");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(*t, (ConvTiling{128, 64, 4}));
  EXPECT_EQ(to_string(*t), "128x64/4");
}

TEST(ConvTilingTest, RejectsMalformedTextAndUnbuiltSizes) {
  for (const char* text : {"", "128x64", "128/4x64", "128x64/", "x64/4", "128x64/4x", "-64x64/1"}) {
    Result<ConvTiling> t = parse_conv_tiling(text);
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(t.status().message().find("expected <channels>x<pixels>/<splits>"), std::string::npos) << text;
  }
  EXPECT_NE(parse_conv_tiling("32x64/1").status().message().find("tile sizes must be 64 or 128"), std::string::npos);
  EXPECT_NE(parse_conv_tiling("64x64/0").status().message().find("splits must be at least 1"), std::string::npos);
}

// Shapes of 3x3 convs (pad 1) like ResNet-50's at 224x224, as
// {pixels, channels out per group, K, groups}; the tilings follow from a
// target of 396 workgroups and at least 9 K steps (of 16) per slice.
TEST(ConvTilingTest, SplitsKUntilTheGpuIsFilled) {
  // 256 -> 256 at 56x56: 128x64 tiles, 2 x 49 = 98; 396 / 98 rounds to 4
  // slices of 36 of the 144 steps.
  EXPECT_EQ(choose_conv_tiling({3136, 256, 2304, 1}), (ConvTiling{128, 64, 4}));
  // 64 -> 64 at 56x56: 49 tiles of 64x64 want 8 slices, but 36 steps allow 4.
  EXPECT_EQ(choose_conv_tiling({3136, 64, 576, 1}), (ConvTiling{64, 64, 4}));
  // 128 -> 128 at 28x28: 128x64 tiles (13) reach only 13 x 8 = 104
  // workgroups with 72 / 9 = 8 slices, under 3/4 of the target, so 64x64:
  // 26 tiles x 8 slices.
  EXPECT_EQ(choose_conv_tiling({784, 128, 1152, 1}), (ConvTiling{64, 64, 8}));
  // 512 -> 512 at 7x7: 8 tiles of 64x64, 288 / 9 = 32 slices.
  EXPECT_EQ(choose_conv_tiling({49, 512, 4608, 1}), (ConvTiling{64, 64, 32}));
  // Grouped, 32 groups of 32 -> 32 at 14x14: 4 x 32 = 128 tiles, 3 slices
  // wanted, 18 / 9 = 2 allowed.
  EXPECT_EQ(choose_conv_tiling({196, 32, 288, 32}), (ConvTiling{64, 64, 2}));
}

TEST(ConvTilingTest, KeepsOnePassWhenTheTilesFillTheGpu) {
  // The 256-channel conv at batch 8: 2 x 392 = 784 tiles of 128x64.
  EXPECT_EQ(choose_conv_tiling({8 * 3136, 256, 2304, 1}), (ConvTiling{128, 64, 1}));
  // ResNet's stem, 3 -> 64 7x7 stride 2: K = 147 is 10 steps, too few to split.
  EXPECT_EQ(choose_conv_tiling({112 * 112, 64, 147, 1}), (ConvTiling{64, 64, 1}));
}

TEST(ConvTilingTest, ClampsSplitsToKStepsAndPartialSumBytes) {
  // K = 40: 3 steps.
  EXPECT_EQ(clamp_conv_tiling({64, 64, 16}, {64, 64, 40, 1}).splits, 3u);
  // 2^20 pixels x 64 channels: one copy of the output is 256 MiB already.
  EXPECT_EQ(clamp_conv_tiling({64, 64, 8}, {int64_t{1} << 20, 64, 1024, 1}).splits, 1u);
  EXPECT_EQ(clamp_conv_tiling({64, 64, 0}, {64, 64, 1024, 1}).splits, 1u);
}

TEST(ConvTilingTest, CountsKStepsOfSixteen) {
  EXPECT_EQ(conv_k_steps({3136, 256, 2304, 1}), 144);
  EXPECT_EQ(conv_k_steps({1, 1, 17, 1}), 2);
  EXPECT_EQ(conv_k_steps({1, 1, 1, 1}), 1);
}

// --- lowering ----------------------------------------------------------------

using hetsched::testing::build;

LoweredIsland lower(const Graph& g, std::optional<ConvTiling> tiling, std::optional<CoopMatConv> coopmat = {}) {
  Result<LoweredIsland> l = lower_island(g, LoweringOptions{tiling, coopmat});
  EXPECT_TRUE(l.is_ok()) << l.status().message();
  return std::move(l).value();
}

std::vector<float> floats(const BufferPlan& plan) {
  std::vector<float> v(plan.data.size() / sizeof(float));
  std::memcpy(v.data(), plan.data.data(), plan.data.size());
  return v;
}

TEST(VulkanConvLoweringTest, PadsWeightsToWholeKStepsAndTiles) {
  // W[oc][c] = 10 * oc + c for 3 output channels of 17 inputs (1x1): K = 17
  // pads to 32 rows, 3 channels to a 64-wide row.
  std::vector<float> w(3 * 17);
  for (int oc = 0; oc < 3; ++oc)
    for (int c = 0; c < 17; ++c) w[oc * 17 + c] = 10.f * oc + c;
  GraphBuilder b("g");
  b.output(b.op("Conv", {b.input("x", {DType::kFloat32, {1, 17, 2, 2}}), b.constant_f32("w", {3, 17, 1, 1}, w)}));
  const LoweredIsland l = lower(build(b), ConvTiling{64, 64, 1});
  ASSERT_EQ(l.steps.size(), 1u);
  EXPECT_EQ(l.steps[0].specialization[4], 0u);  // 17 channels: channel-major through the tap table
  const std::vector<float> arranged = floats(l.buffers[l.steps[0].bindings[1]]);
  ASSERT_EQ(arranged.size(), 32u * 64u);
  for (int k = 0; k < 32; ++k)
    for (int oc = 0; oc < 64; ++oc)
      EXPECT_EQ(arranged[k * 64 + oc], k < 17 && oc < 3 ? 10.f * oc + k : 0.f) << "k " << k << " oc " << oc;
}

TEST(VulkanConvLoweringTest, OrdersKTapMajorWhenChannelsFillWholeSteps) {
  // W[oc][c][kh][kw] = 1000 * oc + 10 * c + (3 * kh + kw) for 2 x 16 x 3 x 3:
  // row (3 * kh + kw) * 16 + c of the arranged weights holds channel c at tap
  // (kh, kw), and no tap table is bound.
  std::vector<float> w(2 * 16 * 9);
  for (int oc = 0; oc < 2; ++oc)
    for (int c = 0; c < 16; ++c)
      for (int tap = 0; tap < 9; ++tap) w[(oc * 16 + c) * 9 + tap] = 1000.f * oc + 10.f * c + tap;
  GraphBuilder b("g");
  b.output(b.op("Conv", {b.input("x", {DType::kFloat32, {1, 16, 5, 5}}), b.constant_f32("w", {2, 16, 3, 3}, w)},
                {{"pads", Ints{1, 1, 1, 1}}}));
  const LoweredIsland l = lower(build(b), ConvTiling{64, 64, 1});
  ASSERT_EQ(l.steps.size(), 1u);
  EXPECT_EQ(l.steps[0].specialization[4], 1u);
  EXPECT_EQ(l.steps[0].bindings[4], kParamsBuffer);
  const std::vector<float> arranged = floats(l.buffers[l.steps[0].bindings[1]]);
  ASSERT_EQ(arranged.size(), 144u * 64u);
  for (int tap = 0; tap < 9; ++tap)
    for (int c = 0; c < 16; ++c)
      for (int oc = 0; oc < 64; ++oc)
        EXPECT_EQ(arranged[(tap * 16 + c) * 64 + oc], oc < 2 ? 1000.f * oc + 10.f * c + tap : 0.f)
            << "tap " << tap << " c " << c << " oc " << oc;
}

TEST(VulkanConvLoweringTest, SplitKAddsAReduceStepAfterABarrier) {
  // K = 64 * 9 = 576: 36 steps, so 4 slices of 9.
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 64, 10, 10}});
  const ValueId y =
      b.op("Conv", {x, b.constant("w", random_tensor({64, 64, 3, 3}, 1)), b.constant("b", random_tensor({64}, 2))},
           {{"pads", Ints{1, 1, 1, 1}}}, "conv");
  b.output(b.op("Relu", {y}, {}, "relu"));
  const LoweredIsland l = lower(build(b), ConvTiling{64, 128, 4});
  ASSERT_EQ(l.steps.size(), 2u);
  const Step& conv = l.steps[0];
  const Step& reduce = l.steps[1];
  EXPECT_EQ(conv.kernel, Kernel::kConv2d);
  // 4 x 8 per invocation, 4 slices, no epilogue here, tap-major (64 channels).
  EXPECT_EQ(conv.specialization, (std::vector<uint32_t>{4, 8, 4, 0, 1, 0}));  // the last: NCHW
  EXPECT_EQ(conv.groups, (std::array<uint32_t, 3>{1, 1, 4}));  // 100 pixels, 64 channels, 4 slices
  EXPECT_EQ(reduce.kernel, Kernel::kConv2dReduce);
  EXPECT_EQ(reduce.specialization, (std::vector<uint32_t>{4}));
  EXPECT_EQ(reduce.groups, (std::array<uint32_t, 3>{25, 1, 1}));  // 6400 outputs / 256
  EXPECT_TRUE(reduce.barrier_before);
  EXPECT_EQ(reduce.label, "conv+relu");
  // The partial sums: written by the conv, read by the reduce, 4 x the output.
  ASSERT_EQ(conv.writes.size(), 1u);
  const int partial = conv.writes[0];
  EXPECT_EQ(reduce.bindings[0], partial);
  EXPECT_EQ(l.buffers[partial].role, BufferPlan::Role::kIntermediate);
  EXPECT_EQ(l.buffers[partial].bytes, 4u * 64 * 100 * sizeof(float));
  // The bias and the epilogue (relu) belong to the reduce step.
  EXPECT_EQ(conv.bindings[2], kParamsBuffer);
  EXPECT_NE(reduce.bindings[1], kParamsBuffer);
  ConvPush push{};
  std::memcpy(&push, reduce.push_constants.data(), sizeof(push));
  EXPECT_EQ(push.has_bias, 1u);
  EXPECT_EQ(push.epilogue_ops, static_cast<uint32_t>(OpCode::kRelu));
}

TEST(VulkanConvLoweringTest, SplitKConvsShareOnePartialSumsBufferAndCapSplitsAtKSteps) {
  // Three convs: K = 8 * 9 = 72 twice (5 steps, so 16 slices become 5),
  // then K = 16 * 9 = 144 (9 steps, 9 slices).
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 8, 6, 6}});
  const ValueId h = b.op("Conv", {x, b.constant("w1", random_tensor({8, 8, 3, 3}, 1))}, {{"pads", Ints{1, 1, 1, 1}}});
  const ValueId y = b.op("Conv", {h, b.constant("w2", random_tensor({16, 8, 3, 3}, 2))}, {{"pads", Ints{1, 1, 1, 1}}});
  b.output(b.op("Conv", {y, b.constant("w3", random_tensor({4, 16, 3, 3}, 3))}, {{"pads", Ints{1, 1, 1, 1}}}));
  const LoweredIsland l = lower(build(b), ConvTiling{128, 128, 16});
  // conv1 + reduce, conv2 + reduce, conv3 + reduce.
  ASSERT_EQ(l.steps.size(), 6u);
  EXPECT_EQ(l.steps[0].specialization[2], 5u);
  EXPECT_EQ(l.steps[2].specialization[2], 5u);
  EXPECT_EQ(l.steps[4].specialization[2], 9u);
  EXPECT_EQ(l.steps[0].writes, l.steps[2].writes);
  EXPECT_EQ(l.steps[0].writes, l.steps[4].writes);
  // Sized for the largest: conv2's 5 slices of 16 x 36 outputs.
  EXPECT_EQ(l.buffers[l.steps[0].writes[0]].bytes, 5u * 16 * 36 * sizeof(float));
  for (const Step& s : l.steps) EXPECT_TRUE(s.barrier_before || &s == &l.steps[0]);
}

// ResNet's blocks: conv, BatchNormalization, the skip connection's Add,
// Relu. The identity block's Add joins the conv it follows; the downsample
// block's Add joins the later of its two convs (the other's output exists
// by then), so each block's tail is one dispatch.
Graph residual_blocks() {
  GraphBuilder b("residual_blocks");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 16, 9, 7}});
  const auto batch_norm = [&](ValueId v, int64_t c, uint64_t seed) {
    return b.op("BatchNormalization",
                {v, b.constant("s" + std::to_string(seed), random_tensor({c}, seed, 0.5f, 1.5f)),
                 b.constant("b" + std::to_string(seed), random_tensor({c}, seed + 1, -0.2f, 0.2f)),
                 b.constant("m" + std::to_string(seed), random_tensor({c}, seed + 2, -0.2f, 0.2f)),
                 b.constant("v" + std::to_string(seed), random_tensor({c}, seed + 3, 0.5f, 1.5f))});
  };
  ValueId a = b.op("Conv", {x, b.constant("wa", random_tensor({16, 16, 3, 3}, 1, -0.2f, 0.2f))},
                   {{"pads", Ints{1, 1, 1, 1}}}, "conv_a");
  const ValueId r1 = b.op("Relu", {b.op("Add", {batch_norm(a, 16, 10), x}, {}, "add_identity")}, {}, "relu_a");
  const ValueId c = b.op("Conv", {r1, b.constant("wc", random_tensor({24, 16, 3, 3}, 2, -0.2f, 0.2f))},
                         {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}, "conv_c");
  const ValueId d = b.op("Conv", {r1, b.constant("wd", random_tensor({24, 16, 1, 1}, 3, -0.2f, 0.2f))},
                         {{"strides", Ints{2, 2}}}, "conv_d");
  b.output(b.op("Relu", {b.op("Add", {batch_norm(c, 24, 20), batch_norm(d, 24, 30)}, {}, "add_down")}, {},
                "relu_down"));
  return build(b);
}

TEST(VulkanConvLoweringTest, ResidualAddsJoinTheirConvBeforeTheRelu) {
  const LoweredIsland l = lower(residual_blocks(), ConvTiling{64, 64, 1});
  // conv_a (+ add, relu), conv_c, conv_d (+ add, relu): no elementwise step.
  ASSERT_EQ(l.steps.size(), 3u);
  const auto push_of = [](const Step& s) {
    ConvPush push{};
    std::memcpy(&push, s.push_constants.data(), sizeof(push));
    return push;
  };
  for (const Step& s : l.steps) EXPECT_EQ(s.kernel, Kernel::kConv2d);
  EXPECT_EQ(l.steps[0].label, "conv_a+BatchNormalization_0+add_identity+relu_a");
  EXPECT_EQ(push_of(l.steps[0]).has_residual, 1u);
  EXPECT_EQ(push_of(l.steps[0]).epilogue_ops, static_cast<uint32_t>(OpCode::kRelu));
  ASSERT_EQ(l.steps[0].bindings.size(), 6u);
  EXPECT_EQ(l.steps[0].bindings[5], l.input_buffers[0]);  // x
  EXPECT_NE(std::find(l.steps[0].reads.begin(), l.steps[0].reads.end(), l.input_buffers[0]), l.steps[0].reads.end());
  EXPECT_EQ(push_of(l.steps[1]).has_residual, 0u);
  EXPECT_EQ(l.steps[1].bindings[5], kParamsBuffer);
  EXPECT_EQ(l.steps[2].label, "conv_d+BatchNormalization_2+add_down+relu_down");
  EXPECT_EQ(push_of(l.steps[2]).has_residual, 1u);
  EXPECT_EQ(l.steps[2].bindings[5], l.steps[1].writes[0]);  // conv_c's output
  EXPECT_TRUE(l.steps[2].barrier_before);                     // it reads what conv_c wrote
}

TEST(VulkanConvLoweringTest, SplitKReducesAddTheResidual) {
  const LoweredIsland l = lower(residual_blocks(), ConvTiling{64, 64, 4});
  // conv_a and conv_c with their reduces; conv_d's K (16 channels, 1x1) is
  // one step, so it runs unsplit and adds its residual itself.
  ASSERT_EQ(l.steps.size(), 5u);
  EXPECT_EQ(l.steps[4].kernel, Kernel::kConv2d);
  EXPECT_EQ(l.steps[4].bindings[5], l.steps[3].writes[0]);
  const Step& reduce = l.steps[1];
  EXPECT_EQ(reduce.kernel, Kernel::kConv2dReduce);
  ASSERT_EQ(reduce.bindings.size(), 4u);
  EXPECT_EQ(reduce.bindings[3], l.input_buffers[0]);
  EXPECT_EQ(l.steps[0].bindings[5], kParamsBuffer);  // the slices do not read it
  ConvPush push{};
  std::memcpy(&push, reduce.push_constants.data(), sizeof(push));
  EXPECT_EQ(push.has_residual, 1u);
}

TEST(VulkanConvLoweringTest, AnAddAfterTheActivationOrOfALaterTensorStaysElementwise) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 8, 5, 5}});
  const ValueId w = b.constant("w", random_tensor({8, 8, 3, 3}, 1));
  // Relu before the Add: the residual would be added after the epilogue.
  const ValueId y = b.op("Relu", {b.op("Conv", {x, w}, {{"pads", Ints{1, 1, 1, 1}}})});
  const ValueId z = b.op("Add", {y, x});
  // The other side is made after this conv (by a Sigmoid of x emitted later).
  const ValueId u = b.op("Conv", {z, w}, {{"pads", Ints{1, 1, 1, 1}}});
  b.output(b.op("Add", {u, b.op("Sigmoid", {z})}));
  const LoweredIsland l = lower(build(b), ConvTiling{64, 64, 1});
  size_t elementwise = 0;
  for (const Step& s : l.steps) {
    if (s.kernel == Kernel::kElementwise) ++elementwise;
    if (s.kernel == Kernel::kConv2d) {
      ConvPush push{};
      std::memcpy(&push, s.push_constants.data(), sizeof(push));
      EXPECT_EQ(push.has_residual, 0u) << s.label;
    }
  }
  EXPECT_GE(elementwise, 2u);
}

// Depthwise convs (depthwise_conv2d.comp, no residual binding), 1-D as
// well as 2-D, keep the Add as an elementwise step.
Graph depthwise_residuals() {
  GraphBuilder b("depthwise_residuals");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 8, 20}});
  const ValueId y = b.op("Conv", {x, b.constant("w1", random_tensor({8, 1, 3}, 1))},
                         {{"group", int64_t{8}}, {"pads", Ints{1, 1}}});
  const ValueId z = b.op("Reshape", {b.op("Add", {y, x}), b.constant_i64("shape", {4}, {1, 8, 4, 5})});
  const ValueId u = b.op("Conv", {z, b.constant("w2", random_tensor({8, 1, 3, 3}, 2))},
                         {{"group", int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}});
  b.output(b.op("Relu", {b.op("Add", {u, z})}));
  return build(b);
}

TEST(VulkanConvLoweringTest, DepthwiseConvsKeepTheirAddElementwise) {
  const LoweredIsland l = lower(depthwise_residuals(), std::nullopt);
  size_t elementwise = 0;
  for (const Step& s : l.steps) elementwise += s.kernel == Kernel::kElementwise;
  EXPECT_EQ(elementwise, 2u);
}

// --- on the GPU ----------------------------------------------------------------

struct ConvShape {
  std::string name;
  Shape x, w;
  std::vector<std::pair<std::string, Attribute>> attrs;
  bool bias = true;
  bool relu = false;
};

// Shapes that leave partial tiles along every axis and more K steps than
// most tilings have slices; the first three have channels per group that
// are multiples of 16 (tap-major K), the others not (the tap table, K not a
// multiple of 16).
std::vector<ConvShape> shapes() {
  return {
      {"TapMajorDilatedStrided",
       {2, 32, 9, 10},
       {20, 32, 3, 3},
       {{"pads", Ints{2, 2, 2, 2}}, {"dilations", Ints{2, 2}}, {"strides", Ints{1, 2}}},
       true,
       false},
      {"TapMajorGrouped",
       {1, 64, 7, 7},
       {48, 32, 3, 3},
       {{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}},
       false,
       true},
      {"TapMajor5x1", {1, 16, 12, 6}, {70, 16, 5, 1}, {{"pads", Ints{2, 0, 2, 0}}}, true, false},
      {"Conv3x3Pad1BiasRelu", {1, 20, 11, 13}, {70, 20, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, true},
      {"GroupedStrided", {2, 16, 9, 9}, {24, 8, 3, 3}, {{"group", int64_t{2}}, {"strides", Ints{2, 2}}}, true, false},
      {"Conv1x1Batch3", {3, 37, 5, 4}, {9, 37, 1, 1}, {}, false, false},
  };
}

Graph conv_graph(const ConvShape& s) {
  GraphBuilder b(s.name);
  std::vector<ValueId> inputs = {b.input("x", {DType::kFloat32, s.x}), b.constant("w", random_tensor(s.w, 11))};
  if (s.bias) inputs.push_back(b.constant("b", random_tensor({s.w[0]}, 12)));
  ValueId y = b.op("Conv", inputs);
  for (const auto& [k, v] : s.attrs) b.raw().node(b.raw().num_nodes() - 1).attrs.set(k, v);
  if (s.relu) y = b.op("Relu", {y});
  b.output(y);
  return build(b);
}

class VulkanConvTest : public hetsched::testing::VkTest {
 protected:
  // A Vulkan delegate on a validated context this test registers.
  Result<std::unique_ptr<Delegate>> make_delegate() {
    std::shared_ptr<SharedGpuContext> context = make_context();
    if (!context) return internal_error("no Vulkan context");
    HS_RETURN_IF_ERROR(SharedGpuContextRegistry::get().register_context("vulkan_conv_test:0", context));
    return make_vulkan_delegate(
        {{"gpu_shared_context_token", "vulkan_conv_test"}, {"gpu_shared_context_mode", "lookup_only"}});
  }

  // `g` under each conv tiling gives `want` (its one output) within f32 rounding.
  static void expect_every_tiling_matches(Delegate& delegate, const Graph& g, const std::vector<Tensor>& inputs,
                                          const Tensor& want, std::initializer_list<const char*> tilings) {
    for (const char* tiling : tilings) {
      SCOPED_TRACE(tiling);
      Result<hetsched::testing::GpuIslandDriver> driver =
          hetsched::testing::GpuIslandDriver::create(delegate, g, {{{"conv_tiling", tiling}}, 0});
      ASSERT_TRUE(driver.is_ok()) << driver.status().message();
      Result<std::vector<Tensor>> got = driver->run(inputs);
      ASSERT_TRUE(got.is_ok()) << got.status().message();
      EXPECT_TRUE(hetsched::testing::all_close((*got)[0], want, 1e-4f, 1e-5f));
    }
  }
};

TEST_F(VulkanConvTest, EveryTilingMatchesTheCpuKernels) {
  Result<std::unique_ptr<Delegate>> delegate = make_delegate();
  ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
  for (const ConvShape& shape : shapes()) {
    const Graph g = conv_graph(shape);
    const std::vector<Tensor> inputs = {random_tensor(shape.x, 100)};
    Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    SCOPED_TRACE(shape.name);
    expect_every_tiling_matches(**delegate, g, inputs, (*want)[0],
                                {"auto", "64x64/1", "128x64/1", "64x128/2", "128x128/3", "64x64/64"});
  }
}

TEST_F(VulkanConvTest, ResidualBlocksMatchTheCpuKernelsOnEveryTiling) {
  Result<std::unique_ptr<Delegate>> delegate = make_delegate();
  ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
  const Graph g = residual_blocks();
  const std::vector<Tensor> inputs = {random_tensor({1, 16, 9, 7}, 100)};
  Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  expect_every_tiling_matches(**delegate, g, inputs, (*want)[0], {"64x64/1", "128x64/1", "64x128/2", "64x64/64"});
}

TEST_F(VulkanConvTest, DepthwiseResidualsMatchTheCpuKernels) {
  Result<std::unique_ptr<Delegate>> delegate = make_delegate();
  ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
  const Graph g = depthwise_residuals();
  const std::vector<Tensor> inputs = {random_tensor({1, 8, 20}, 100)};
  Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  expect_every_tiling_matches(**delegate, g, inputs, (*want)[0], {"auto"});
}

TEST_F(VulkanConvTest, RejectsAMalformedTilingOption) {
  Result<std::unique_ptr<Delegate>> delegate = make_vulkan_delegate({{"conv_tiling", "64x64"}});
  EXPECT_EQ(delegate.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(delegate.status().message().find("failed to parse conv tiling '64x64'"), std::string::npos);
}

}  // namespace
}  // namespace hetsched::vulkan
