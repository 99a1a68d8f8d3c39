// Squeeze-and-excitation blocks' convs and Mul in one dispatch
// (delegates/vulkan/lowering.cc plan_se_scale, shaders/se_scale.comp):
// which chains become one, and the kernel against the portable CPU kernels
// on lavapipe with validation — odd planes (chunks of 1024 elements
// starting mid-channel), batches, more channels and hidden units than one
// workgroup has invocations, folded BatchNorm and biases, the activations
// MobileNetV3 (Relu, HardSigmoid) and EfficientNet (SiLU, Sigmoid) use, and
// f16 storage. Also the squeeze's mean written by the depthwise conv
// before it (plan_depthwise_means, shaders/depthwise_mean.comp).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "delegates/vulkan/lowering.h"
#include "delegates/vulkan/vulkan_delegate.h"
#include "graph/builder.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vulkan {
namespace {

using hetsched::testing::build;
using hetsched::testing::random_tensor;
using Ints = std::vector<int64_t>;

struct Block {
  int64_t batch = 1, channels = 16, squeeze = 4, h = 7, w = 5;
  bool reduce_mean = false;    // ReduceMean over H and W instead of GlobalAveragePool
  bool efficientnet = false;   // SiLU and Sigmoid instead of Relu and HardSigmoid
  bool batch_norm = false;     // a BatchNormalization after the first conv
  bool gate_read_twice = false;  // the first conv's output is also an island output
  bool relu_after = false;       // a Relu after the Mul (joins its chain: not fused)
};

// x -> depthwise conv (so x is computed on the GPU) -> gate = SE(x) ->
// Mul(x, gate) -> 1x1 conv (as in MobileNetV3 and EfficientNet).
Graph block(const Block& c) {
  GraphBuilder b("se");
  const ValueId in = b.input("x", {DType::kFloat32, {c.batch, c.channels, c.h, c.w}});
  const ValueId x = b.op("Conv", {in, b.constant("dw", random_tensor({c.channels, 1, 3, 3}, 1, -0.5f, 0.5f))},
                         {{"pads", Ints{1, 1, 1, 1}}, {"group", c.channels}});
  const ValueId mean = c.reduce_mean ? b.op("ReduceMean", {x}, {{"axes", Ints{2, 3}}}) : b.op("GlobalAveragePool", {x});
  ValueId h = b.op("Conv", {mean, b.constant("w1", random_tensor({c.squeeze, c.channels, 1, 1}, 2, -0.5f, 0.5f)),
                            b.constant("b1", random_tensor({c.squeeze}, 3))});
  if (c.batch_norm)
    h = b.op("BatchNormalization", {h, b.constant("s", random_tensor({c.squeeze}, 4, 0.5f, 1.5f)),
                                    b.constant("bb", random_tensor({c.squeeze}, 5)), b.constant("m", random_tensor({c.squeeze}, 6)),
                                    b.constant("v", random_tensor({c.squeeze}, 7, 0.5f, 2.f))});
  const ValueId hidden = c.efficientnet ? b.op("Mul", {h, b.op("Sigmoid", {h})}) : b.op("Relu", {h});
  if (c.gate_read_twice) b.output(hidden);
  ValueId gate = b.op("Conv", {hidden, b.constant("w2", random_tensor({c.channels, c.squeeze, 1, 1}, 8, -0.5f, 0.5f)),
                               b.constant("b2", random_tensor({c.channels}, 9))});
  gate = c.efficientnet ? b.op("Sigmoid", {gate}) : b.op("HardSigmoid", {gate}, {{"alpha", 1.f / 6}, {"beta", 0.5f}});
  ValueId scaled = b.op("Mul", {x, gate});
  if (c.relu_after) scaled = b.op("Relu", {scaled});
  b.output(b.op("Conv", {scaled, b.constant("wp", random_tensor({5, c.channels, 1, 1}, 10, -0.5f, 0.5f))}));
  return build(b);
}

size_t count(const LoweredIsland& l, Kernel kernel) {
  size_t n = 0;
  for (const Step& s : l.steps) n += s.kind == Step::Kind::kDispatch && s.kernel == kernel;
  return n;
}

LoweredIsland lower(const Graph& g) {
  Result<LoweredIsland> l = lower_island(g, LoweringOptions{});
  EXPECT_TRUE(l.is_ok()) << l.status().message();
  return std::move(l).value();
}

TEST(SeScaleLoweringTest, TheConvsAndTheMulAreOneDispatch) {
  for (const bool reduce_mean : {false, true})
    for (const bool efficientnet : {false, true}) {
      Block c;
      c.reduce_mean = reduce_mean;
      c.efficientnet = efficientnet;
      const LoweredIsland l = lower(block(c));
      EXPECT_EQ(count(l, Kernel::kSeScale), 1u) << reduce_mean << efficientnet;
      // The mean is written by the depthwise conv (plan_depthwise_means).
      EXPECT_EQ(count(l, Kernel::kReduce), 0u);
      EXPECT_EQ(count(l, Kernel::kDepthwiseMean), 1u);
      // The depthwise conv and its means, the convs and Mul, the projection.
      EXPECT_EQ(l.dispatch_count(), 3u) << reduce_mean << efficientnet;
    }
}

TEST(SeScaleLoweringTest, AHiddenValueReadElsewhereAChainAfterTheMulOrTooManyHiddenUnitsKeepTheirDispatches) {
  Block twice;
  twice.gate_read_twice = true;
  EXPECT_EQ(count(lower(block(twice)), Kernel::kSeScale), 0u);
  Block chain;
  chain.relu_after = true;
  EXPECT_EQ(count(lower(block(chain)), Kernel::kSeScale), 0u);
  Block wide;
  wide.squeeze = 1025;  // past kSeScaleMaxSqueeze
  wide.channels = 8;
  EXPECT_EQ(count(lower(block(wide)), Kernel::kSeScale), 0u);
  wide.squeeze = 1024;
  EXPECT_EQ(count(lower(block(wide)), Kernel::kSeScale), 1u);
  Block big;  // 1024 x 129 weights, past kSeScaleMaxWeights
  big.channels = 1024;
  big.squeeze = 129;
  EXPECT_EQ(count(lower(block(big)), Kernel::kSeScale), 0u);
  big.squeeze = 128;
  EXPECT_EQ(count(lower(block(big)), Kernel::kSeScale), 1u);
}

class SeScaleGpuTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    std::shared_ptr<SharedGpuContext> context = make_context();
    ASSERT_NE(context, nullptr);
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("se_scale_test:0", context).is_ok());
  }

  // Three runs on the same island, every one within 1e-4 of the largest
  // output (1e-2 with f16 storage) of the portable CPU kernels.
  void expect_matches_cpu(const Block& c, const std::string& storage = "fp32") {
    const Graph g = block(c);
    ASSERT_EQ(count(lower(g), Kernel::kSeScale), 1u);
    Result<std::unique_ptr<Delegate>> delegate =
        make_vulkan_delegate({{"gpu_shared_context_token", "se_scale_test"}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    const std::string label = "se " + std::to_string(c.batch) + "x" + std::to_string(c.channels) + "x" +
                              std::to_string(c.h) + "x" + std::to_string(c.w) + " squeeze " + std::to_string(c.squeeze);
    hetsched::testing::expect_runs_match_cpu(
        **delegate, g, {{"storage", storage}}, 3,
        [&](uint32_t run) { return std::vector<Tensor>{random_tensor({c.batch, c.channels, c.h, c.w}, 100 + run)}; },
        1e-4f, label);
  }
};

TEST_F(SeScaleGpuTest, MobileNetStyleBlocksMatchTheCpuKernels) {
  expect_matches_cpu({1, 16, 4, 7, 5});
  expect_matches_cpu({2, 37, 9, 13, 11, true, false, true});
  expect_matches_cpu({1, 12, 3, 56, 56});  // planes wider than a workgroup's 1024 elements
  // MobileNetV3-Small's last blocks (576 x 144, fused since session 14):
  // 36 quads of hidden units, 7 channel parts of 82 channels each (the
  // four-sum loop and its tail), 21 gates of 8 lanes per workgroup.
  expect_matches_cpu({1, 576, 144, 7, 7});
}

TEST_F(SeScaleGpuTest, EfficientNetStyleBlocksWithManyUnitsAndChannelsMatchTheCpuKernels) {
  // 1000 hidden units (four rounds of a workgroup's 256 invocations), and
  // 1000 one-pixel channels (a chunk's gates take four rounds too).
  Block units{1, 60, 1000, 5, 5};
  units.efficientnet = true;
  expect_matches_cpu(units);
  Block channels{2, 1000, 60, 1, 1};
  channels.efficientnet = true;
  expect_matches_cpu(channels);
  Block small{3, 24, 6, 1, 1};
  small.efficientnet = true;
  small.reduce_mean = true;
  expect_matches_cpu(small);
}

TEST_F(SeScaleGpuTest, BlocksWithF16StorageMatchTheCpuKernels) {
  Block c{2, 96, 24, 14, 14};
  c.efficientnet = true;
  expect_matches_cpu(c, "fp16");
}

// x -> depthwise conv (channel multiplier 2, stride, padding, dilation,
// bias) -> HardSwish -> spatial mean; both the conv's output and the mean
// are island outputs.
struct DepthwiseMean {
  int64_t batch = 1, channels = 6, h = 9, w = 7, kernel = 3, stride = 1, dilation = 1;
  bool reduce_mean = false;  // ReduceMean over H and W instead of GlobalAveragePool
  std::vector<int64_t> mean_axes = {2, 3};
};

Graph depthwise_mean(const DepthwiseMean& c) {
  GraphBuilder b("dw_mean");
  const ValueId in = b.input("x", {DType::kFloat32, {c.batch, c.channels, c.h, c.w}});
  const ValueId conv =
      b.op("Conv",
           {in, b.constant("w", random_tensor({2 * c.channels, 1, c.kernel, c.kernel}, 11, -0.5f, 0.5f)),
            b.constant("b", random_tensor({2 * c.channels}, 12))},
           {{"pads", Ints{c.kernel / 2, c.kernel / 2 + 1, c.kernel / 2, c.kernel / 2}},
            {"group", c.channels},
            {"strides", Ints{c.stride, c.stride}},
            {"dilations", Ints{c.dilation, c.dilation}}});
  const ValueId y = b.op("HardSwish", {conv});
  b.output(y);
  b.output(c.reduce_mean ? b.op("ReduceMean", {y}, {{"axes", c.mean_axes}}) : b.op("GlobalAveragePool", {y}));
  return build(b);
}

TEST(DepthwiseMeanLoweringTest, ASpatialMeanOfADepthwiseConvIsWrittenByTheConv) {
  const LoweredIsland l = lower(depthwise_mean({}));
  EXPECT_EQ(count(l, Kernel::kDepthwiseMean), 1u);
  EXPECT_EQ(l.dispatch_count(), 1u);
  DepthwiseMean reduce;
  reduce.reduce_mean = true;
  EXPECT_EQ(lower(depthwise_mean(reduce)).dispatch_count(), 1u);
  // Over channels too, or planes past kDepthwiseMeanMaxPlane: two dispatches.
  reduce.mean_axes = {1, 2, 3};
  const LoweredIsland channels = lower(depthwise_mean(reduce));
  EXPECT_EQ(count(channels, Kernel::kDepthwiseMean), 0u);
  EXPECT_EQ(channels.dispatch_count(), 2u);
  DepthwiseMean wide;  // the padding widens the output by one: 29 x 28, then 28 x 28
  wide.h = 29;
  wide.w = 27;
  EXPECT_EQ(count(lower(depthwise_mean(wide)), Kernel::kDepthwiseMean), 0u);
  wide.h = 28;
  const LoweredIsland fused = lower(depthwise_mean(wide));
  ASSERT_EQ(count(fused, Kernel::kDepthwiseMean), 1u);
  // Workgroups of the plane's pixels rounded up to a power of two, 64 to
  // 256; then the layout, NCHW.
  EXPECT_EQ(fused.steps[0].specialization, (std::vector<uint32_t>{256, 0}));
  EXPECT_EQ(lower(depthwise_mean({})).steps[0].specialization, (std::vector<uint32_t>{128, 0}));  // 9 x 8
  EXPECT_EQ(lower(depthwise_mean({1, 2, 7, 6})).steps[0].specialization, (std::vector<uint32_t>{64, 0}));  // 7 x 7
}

class DepthwiseMeanGpuTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    std::shared_ptr<SharedGpuContext> context = make_context();
    ASSERT_NE(context, nullptr);
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("dw_mean_test:0", context).is_ok());
  }

  // Two runs; the conv's output and the means each within 1e-5 of their
  // largest value (1e-2 with f16 storage) of the portable CPU kernels.
  void expect_matches_cpu(const DepthwiseMean& c, const std::string& storage = "fp32") {
    const Graph g = depthwise_mean(c);
    ASSERT_EQ(count(lower(g), Kernel::kDepthwiseMean), 1u);
    Result<std::unique_ptr<Delegate>> delegate =
        make_vulkan_delegate({{"gpu_shared_context_token", "dw_mean_test"}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    const std::string label = "dw mean " + std::to_string(c.batch) + "x" + std::to_string(c.channels) + "x" +
                              std::to_string(c.h) + "x" + std::to_string(c.w) + " k" + std::to_string(c.kernel) + " s" +
                              std::to_string(c.stride) + " d" + std::to_string(c.dilation);
    ASSERT_EQ(g.outputs().size(), 2u);  // the conv's output and the means
    hetsched::testing::expect_runs_match_cpu(
        **delegate, g, {{"storage", storage}}, 2,
        [&](uint32_t run) { return std::vector<Tensor>{random_tensor({c.batch, c.channels, c.h, c.w}, 200 + run)}; },
        1e-5f, label);
  }
};

TEST_F(DepthwiseMeanGpuTest, ConvOutputsAndMeansMatchTheCpuKernels) {
  expect_matches_cpu({});
  expect_matches_cpu({2, 5, 14, 11, 5, 2, 1, true});  // batches, 5x5 stride 2, ReduceMean
  expect_matches_cpu({1, 3, 12, 12, 3, 1, 2});          // dilation
  expect_matches_cpu({1, 4, 28, 27, 3, 1, 1});          // 28 x 28 outputs: 4 per invocation of 256
  expect_matches_cpu({1, 7, 7, 6, 3, 1, 1});            // 7 x 7 on 64 invocations
  // (f16 storage of the conv's output and the means, both intermediates
  // there: SeScaleGpuTest.BlocksWithF16StorageMatchTheCpuKernels.)
}

}  // namespace
}  // namespace hetsched::vulkan
