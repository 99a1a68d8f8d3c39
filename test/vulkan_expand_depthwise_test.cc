// An inverted-residual block's 1x1 expand conv and its depthwise conv in one
// dispatch (delegates/vulkan/lowering.cc plan_expand_depthwise,
// shaders/expand_depthwise.comp): which pairs fuse, and the kernel against
// the portable CPU kernels on lavapipe with validation — strides, 3x3 and
// 5x5 windows, batches, folded BatchNorms, activations on both convs, the
// depthwise output's means (a squeeze-and-excitation block's), planes of 64,
// and K split over the invocations a small plane leaves, and f16 storage.
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
  int64_t batch = 1, k = 16, channels = 40, h = 7, w = 7, kernel = 3, stride = 1;
  bool mean = false;           // GlobalAveragePool of the depthwise output, an output too
  bool expand_output = false;  // the expand's output is also an island output (no fusion)
  bool project = false;        // a 1x1 conv to 8 channels after the depthwise one (its output intermediate)
};

Graph block(const Block& c) {
  GraphBuilder b("expand_dw");
  const ValueId x = b.op("Relu", {b.input("x", {DType::kFloat32, {c.batch, c.k, c.h, c.w}})});
  const int64_t ch = c.channels;
  ValueId e = b.op("Conv", {x, b.constant("we", random_tensor({ch, c.k, 1, 1}, 1, -0.5f, 0.5f))});
  e = b.op("BatchNormalization", {e, b.constant("s", random_tensor({ch}, 2, 0.5f, 1.5f)), b.constant("bb", random_tensor({ch}, 3)),
                                  b.constant("m", random_tensor({ch}, 4)), b.constant("v", random_tensor({ch}, 5, 0.5f, 2.f))});
  e = b.op("HardSwish", {e});
  if (c.expand_output) b.output(e);
  ValueId d = b.op("Conv", {e, b.constant("wd", random_tensor({ch, 1, c.kernel, c.kernel}, 6, -0.5f, 0.5f)),
                            b.constant("bd", random_tensor({ch}, 7))},
                   {{"pads", Ints{c.kernel / 2, c.kernel / 2, c.kernel / 2, c.kernel / 2}},
                    {"group", ch},
                    {"strides", Ints{c.stride, c.stride}}});
  d = b.op("Relu", {d});
  if (c.project)
    b.output(b.op("Conv", {d, b.constant("wp", random_tensor({8, ch, 1, 1}, 8, -0.5f, 0.5f))}));
  else
    b.output(d);
  if (c.mean) b.output(b.op("GlobalAveragePool", {d}));
  return build(b);
}

LoweredIsland lower(const Graph& g) {
  Result<LoweredIsland> l = lower_island(g, LoweringOptions{});
  EXPECT_TRUE(l.is_ok()) << l.status().message();
  return std::move(l).value();
}

size_t count(const LoweredIsland& l, Kernel kernel) {
  size_t n = 0;
  for (const Step& s : l.steps) n += s.kind == Step::Kind::kDispatch && s.kernel == kernel;
  return n;
}

TEST(ExpandDepthwiseLoweringTest, AnExpandReadOnlyByItsDepthwiseConvRunsInsideIt) {
  Block c;
  c.mean = true;
  const LoweredIsland l = lower(block(c));
  EXPECT_EQ(count(l, Kernel::kExpandDepthwise), 1u);
  EXPECT_EQ(l.dispatch_count(), 2u);  // the Relu, then the expand, depthwise conv and mean
  // 49 input pixels: K (16) split over 4 invocations a pixel.
  for (const Step& s : l.steps) {
    if (s.kernel == Kernel::kExpandDepthwise) {
      EXPECT_EQ(s.specialization, (std::vector<uint32_t>{256, 4}));
    }
  }
  // The expand's output also an island output, or planes past 28 x 28, or
  // too many multiply-adds a workgroup: two convs.
  Block out;
  out.expand_output = true;
  EXPECT_EQ(count(lower(block(out)), Kernel::kExpandDepthwise), 0u);
  Block wide{1, 16, 8, 29, 28};
  EXPECT_EQ(count(lower(block(wide)), Kernel::kExpandDepthwise), 0u);
  wide.h = 28;
  EXPECT_EQ(count(lower(block(wide)), Kernel::kExpandDepthwise), 1u);
  wide.k = 21;  // 784 x 21 > kExpandDepthwiseMaxFmas (16384)
  EXPECT_EQ(count(lower(block(wide)), Kernel::kExpandDepthwise), 0u);
}

class ExpandDepthwiseGpuTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    std::shared_ptr<SharedGpuContext> context = make_context();
    ASSERT_NE(context, nullptr);
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("expand_dw_test:0", context).is_ok());
  }

  // Two runs; every output within 1e-5 of its largest value (1e-2 with f16
  // storage) of the portable CPU kernels.
  void expect_matches_cpu(const Block& c, const std::string& storage = "fp32") {
    const Graph g = block(c);
    ASSERT_EQ(count(lower(g), Kernel::kExpandDepthwise), 1u);
    Result<std::unique_ptr<Delegate>> delegate = make_vulkan_delegate(
        {{"gpu_shared_context_token", "expand_dw_test"}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    const std::string label = "expand dw " + std::to_string(c.batch) + "x" + std::to_string(c.k) + "x" +
                              std::to_string(c.h) + "x" + std::to_string(c.w) + " -> " + std::to_string(c.channels) +
                              " k" + std::to_string(c.kernel) + " s" + std::to_string(c.stride);
    hetsched::testing::expect_runs_match_cpu(
        **delegate, g, {{"storage", storage}}, 2, [&](uint32_t run) { return std::vector<Tensor>{random_tensor({c.batch, c.k, c.h, c.w}, 400 + run)}; },
        1e-5f, label);
  }
};

TEST_F(ExpandDepthwiseGpuTest, BlocksMatchTheCpuKernels) {
  expect_matches_cpu({1, 16, 40, 7, 7, 3, 1, true});      // K in 4 slices, with the means
  expect_matches_cpu({2, 24, 12, 14, 13, 5, 2, true});    // batches, 5x5 stride 2, odd plane
  expect_matches_cpu({1, 9, 6, 28, 28, 3, 2});            // 784 pixels in (4 rounds), 196 out
  expect_matches_cpu({1, 13, 7, 11, 10, 3, 1});           // 121 pixels, K 13 in 2 slices (a tail)
}

TEST_F(ExpandDepthwiseGpuTest, F16StorageMatchesTheCpuKernels) {
  Block c{2, 24, 48, 14, 14, 3, 1};
  c.project = true;  // the depthwise output is stored in f16, read by the project conv
  expect_matches_cpu(c, "fp16");
}

}  // namespace
}  // namespace hetsched::vulkan
