// Small 1x1 convs and linear layers in one dispatch with K split inside the
// workgroup (delegates/vulkan/lowering.cc pointwise_fits / emit_pointwise,
// shaders/pointwise_conv.comp): which convs take it, how many slices, and
// the kernel against the portable CPU kernels on lavapipe with validation —
// output channels that are no multiple of 4, batches, one slice to 64,
// folded BatchNorm and bias, a residual Add, activations, linear layers of
// one and several rows, and f16 storage.
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

struct Pointwise {
  int64_t batch = 1, channels = 24, out_channels = 13, h = 7, w = 5;
  bool batch_norm = true;  // BatchNormalization folded into weights and bias
  bool residual = false;   // + a tensor made before the conv (a block's skip), then HardSwish
  bool relu = false;
};

// x -> Relu (so the conv reads a GPU-made value) -> 1x1 conv [-> BN]
// [-> + skip] [-> activation].
Graph pointwise(const Pointwise& c) {
  GraphBuilder b("pw");
  const ValueId in = b.input("x", {DType::kFloat32, {c.batch, c.channels, c.h, c.w}});
  const ValueId x = b.op("Relu", {in});
  const int64_t oc = c.out_channels;
  // Made before the conv, so the Add joins it as its residual.
  const ValueId skip =
      c.residual ? b.op("Sigmoid", {b.input("skip", {DType::kFloat32, {c.batch, oc, c.h, c.w}})}) : kNoValue;
  ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({c.out_channels, c.channels, 1, 1}, 1, -0.5f, 0.5f)),
                            b.constant("b", random_tensor({c.out_channels}, 2))});
  if (c.batch_norm)
    y = b.op("BatchNormalization", {y, b.constant("s", random_tensor({oc}, 3, 0.5f, 1.5f)),
                                    b.constant("bb", random_tensor({oc}, 4)), b.constant("m", random_tensor({oc}, 5)),
                                    b.constant("v", random_tensor({oc}, 6, 0.5f, 2.f))});
  if (c.residual) y = b.op("HardSwish", {b.op("Add", {y, skip})});
  if (c.relu) y = b.op("Relu", {y});
  b.output(y);
  return build(b);
}

// x [rows, k] -> Relu -> Gemm by constant W [n, k] (transB) with bias.
Graph linear(int64_t rows, int64_t k, int64_t n) {
  GraphBuilder b("linear");
  const ValueId x = b.op("Relu", {b.input("x", {DType::kFloat32, {rows, k}})});
  b.output(b.op("Gemm", {x, b.constant("w", random_tensor({n, k}, 7, -0.2f, 0.2f)), b.constant("b", random_tensor({n}, 8))},
                {{"transB", int64_t{1}}}));
  return build(b);
}

LoweredIsland lower(const Graph& g) {
  Result<LoweredIsland> l = lower_island(g, LoweringOptions{});
  EXPECT_TRUE(l.is_ok()) << l.status().message();
  return std::move(l).value();
}

const Step* pointwise_step(const LoweredIsland& l) {
  const Step* found = nullptr;
  for (const Step& s : l.steps)
    if (s.kind == Step::Kind::kDispatch && s.kernel == Kernel::kPointwiseConv) found = &s;
  return found;
}

TEST(PointwiseConvLoweringTest, SmallOneByOneConvsAndLinearLayersAreOneDispatch) {
  Pointwise c;
  c.residual = true;
  const LoweredIsland l = lower(pointwise(c));
  // Relu, Sigmoid, and the conv with its BatchNorm, Add and HardSwish.
  EXPECT_EQ(l.dispatch_count(), 3u);
  const Step* step = pointwise_step(l);
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->reads.size(), 4u);  // x, weights, bias, the residual
  // 35 pixels x 4 quads; 24 channels: slices double while each keeps 4 k.
  // Then NCHW (the VGF runtime runs the same kernel in NHWC).
  EXPECT_EQ(step->specialization, (std::vector<uint32_t>{4, 0}));
  const LoweredIsland head = lower(linear(1, 1024, 1000));
  ASSERT_NE(pointwise_step(head), nullptr);
  EXPECT_EQ(head.dispatch_count(), 2u);  // no split-K reduce
  EXPECT_EQ(pointwise_step(head)->specialization, (std::vector<uint32_t>{64, 0}));
}

TEST(PointwiseConvLoweringTest, StridedPaddedGroupedOrLargeConvsKeepTheImplicitGemm) {
  GraphBuilder b("other");
  const ValueId x = b.op("Relu", {b.input("x", {DType::kFloat32, {1, 8, 10, 10}})});
  b.output(b.op("Conv", {x, b.constant("w1", random_tensor({8, 8, 1, 1}, 1))}, {{"strides", Ints{2, 2}}}));
  b.output(b.op("Conv", {x, b.constant("w2", random_tensor({8, 8, 1, 1}, 2))}, {{"pads", Ints{1, 1, 1, 1}}}));
  b.output(b.op("Conv", {x, b.constant("w3", random_tensor({8, 4, 1, 1}, 3))}, {{"group", int64_t{2}}}));
  b.output(b.op("Conv", {x, b.constant("w4", random_tensor({8, 8, 3, 3}, 4))}));
  EXPECT_EQ(pointwise_step(lower(build(b))), nullptr);
  // Past kPointwiseMaxFmas (32M): 56 x 56 x 128 x 96 = 38.5M.
  Pointwise big{1, 96, 128, 56, 56};
  EXPECT_EQ(pointwise_step(lower(pointwise(big))), nullptr);
  big.out_channels = 106;  // 31.9M
  EXPECT_NE(pointwise_step(lower(pointwise(big))), nullptr);
}

class PointwiseConvGpuTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    std::shared_ptr<SharedGpuContext> context = make_context();
    ASSERT_NE(context, nullptr);
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("pointwise_test:0", context).is_ok());
  }

  // Two runs, each within 1e-5 of the largest output (1e-2 with f16
  // storage) of the portable CPU kernels.
  void expect_matches_cpu(const Graph& g, const std::vector<Shape>& input_shapes, const std::string& what,
                          const std::string& storage = "fp32") {
    ASSERT_NE(pointwise_step(lower(g)), nullptr) << what;
    Result<std::unique_ptr<Delegate>> delegate =
        make_vulkan_delegate({{"gpu_shared_context_token", "pointwise_test"}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    hetsched::testing::expect_runs_match_cpu(
        **delegate, g, {{"storage", storage}}, 2,
        [&](uint32_t run) {
          std::vector<Tensor> inputs;
          for (size_t i = 0; i < input_shapes.size(); ++i)
            inputs.push_back(random_tensor(input_shapes[i], 300 + 10 * run + static_cast<uint32_t>(i)));
          return inputs;
        },
        1e-5f, "pointwise " + what);
  }

  void expect_conv_matches_cpu(const Pointwise& c, const std::string& storage = "fp32") {
    std::vector<Shape> shapes = {{c.batch, c.channels, c.h, c.w}};
    if (c.residual) shapes.push_back({c.batch, c.out_channels, c.h, c.w});
    const std::string what = std::to_string(c.batch) + "x" + std::to_string(c.channels) + "x" + std::to_string(c.h) +
                             "x" + std::to_string(c.w) + " -> " + std::to_string(c.out_channels);
    expect_matches_cpu(pointwise(c), shapes, what, storage);
  }
};

TEST_F(PointwiseConvGpuTest, ConvsMatchTheCpuKernels) {
  expect_conv_matches_cpu({});                                    // 4 slices, 13 channels (a partial quad)
  expect_conv_matches_cpu({2, 37, 9, 11, 6, false, false, true});  // batches, odd K, no BatchNorm
  expect_conv_matches_cpu({1, 576, 96, 7, 7, true, true});         // 64 slices, with a residual
  expect_conv_matches_cpu({1, 3, 5, 28, 28});                      // one slice, K 3
}

TEST_F(PointwiseConvGpuTest, LinearLayersMatchTheCpuKernels) {
  expect_matches_cpu(linear(1, 1024, 1000), {{1, 1024}}, "linear 1x1024 -> 1000");
  expect_matches_cpu(linear(3, 50, 7), {{3, 50}}, "linear 3x50 -> 7");
}

TEST_F(PointwiseConvGpuTest, F16StorageMatchesTheCpuKernels) {
  Pointwise c{2, 48, 20, 14, 14, true, true};
  expect_conv_matches_cpu(c, "fp16");
}

}  // namespace
}  // namespace hetsched::vulkan
