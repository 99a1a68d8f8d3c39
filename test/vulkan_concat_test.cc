// Concat inputs written in place (delegates/vulkan/lowering.cc,
// place_concat_inputs): a DenseNet-style block records no copy at all, its
// concats views of the block's last one; what cannot be placed (a place
// not on a 256-byte boundary, an island input, a value two concats want at
// different places) is copied as before. Every case runs on lavapipe with
// validation and is compared with the portable CPU kernels.
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

// A dense block: x0 = conv(x); layer k reads Concat(x0 .. x(k-1)) and
// makes x(k) (Relu, 3x3 conv of `growth` channels); the block ends in
// Concat(x0 .. x(layers)) and a Relu (so it is no island output).
Graph dense_block(int64_t size, int64_t growth, int layers) {
  GraphBuilder b("dense_block");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, size, size}});
  std::vector<ValueId> features = {b.op("Conv", {x, b.constant("w0", random_tensor({growth, 3, 3, 3}, 1, -0.3f, 0.3f))},
                                        {{"pads", Ints{1, 1, 1, 1}}})};
  for (int k = 1; k <= layers; ++k) {
    const ValueId in = features.size() == 1 ? features[0] : b.op("Concat", features, {{"axis", int64_t{1}}});
    const int64_t channels = growth * static_cast<int64_t>(features.size());
    const ValueId w = b.constant("w" + std::to_string(k),
                                 random_tensor({growth, channels, 3, 3}, 10 + static_cast<uint64_t>(k), -0.2f, 0.2f));
    features.push_back(b.op("Conv", {b.op("Relu", {in}), w}, {{"pads", Ints{1, 1, 1, 1}}}));
  }
  b.output(b.op("Relu", {b.op("Concat", features, {{"axis", int64_t{1}}})}));
  return build(b);
}

LoweredIsland lower(const Graph& g) {
  Result<LoweredIsland> l = lower_island(g, LoweringOptions{});
  EXPECT_TRUE(l.is_ok()) << l.status().message();
  return std::move(l).value();
}

size_t copies(const LoweredIsland& l) {
  size_t n = 0;
  for (const Step& s : l.steps) n += s.kernel == Kernel::kStridedCopy || s.kind == Step::Kind::kCopy;
  return n;
}

TEST(VulkanConcatLoweringTest, ADenseBlockCopiesNothing) {
  // 8x8 f32: 256 bytes a channel, so every place is on a boundary.
  const LoweredIsland l = lower(dense_block(8, 4, 4));
  EXPECT_EQ(copies(l), 0u);
  EXPECT_EQ(l.steps.size(), 5u + 4u + 1u);  // 5 convs, 4 Relus of concats, the last Relu
}

TEST(VulkanConcatLoweringTest, PlacesOffA256ByteBoundaryAreCopied) {
  // 7x7 f32: 196 bytes a channel; with 4 channels a layer no place but the
  // first is on a boundary.
  const LoweredIsland l = lower(dense_block(7, 4, 3));
  EXPECT_GT(copies(l), 0u);
}

// Island inputs, values two concats want at different places, a concat
// along an axis with a dim above 1 before it, and a concat that is an
// island output: copies where needed, still the right answer.
Graph mixed_concats() {
  GraphBuilder b("mixed_concats");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 8, 8}});
  const ValueId a = b.op("Sigmoid", {x});
  const ValueId c = b.op("Tanh", {x});
  const ValueId first = b.op("Concat", {a, c}, {{"axis", int64_t{1}}});
  const ValueId second = b.op("Concat", {c, a, x}, {{"axis", int64_t{1}}});
  const ValueId rows = b.op("Concat", {a, c}, {{"axis", int64_t{2}}});
  b.output(b.op("Relu", {first}));
  b.output(b.op("Relu", {second}));
  b.output(b.op("Relu", {rows}));
  b.output(b.op("Concat", {b.op("Neg", {a}), c}, {{"axis", int64_t{1}}}));
  return build(b);
}

TEST(VulkanConcatLoweringTest, OnlyPlacedInputsSkipTheirCopy) {
  const LoweredIsland l = lower(mixed_concats());
  // second: x (an island input) copied, c and a placed; first: both copied
  // (placed in second); rows: both; the output concat: both.
  EXPECT_EQ(copies(l), 1u + 2u + 2u + 2u);
}

class VulkanConcatTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    std::shared_ptr<SharedGpuContext> context = make_context();
    ASSERT_NE(context, nullptr);
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("vulkan_concat_test:0", context).is_ok());
  }

  void expect_matches_cpu(const Graph& g) {
    Result<std::unique_ptr<Delegate>> delegate = make_vulkan_delegate(
        {{"gpu_shared_context_token", "vulkan_concat_test"}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < g.inputs().size(); ++i)
      inputs.push_back(random_tensor(g.value(g.inputs()[i]).type.shape, 100 + static_cast<uint64_t>(i)));
    Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    Result<hetsched::testing::GpuIslandDriver> driver = hetsched::testing::GpuIslandDriver::create(**delegate, g, {});
    ASSERT_TRUE(driver.is_ok()) << driver.status().message();
    Result<std::vector<Tensor>> got = driver->run(inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i)
      EXPECT_TRUE(hetsched::testing::all_close((*got)[i], (*want)[i], 1e-4f, 1e-5f)) << "output " << i;
  }
};

TEST_F(VulkanConcatTest, DenseBlocksMatchTheCpuKernels) {
  expect_matches_cpu(dense_block(8, 4, 4));
  expect_matches_cpu(dense_block(7, 4, 3));
}

TEST_F(VulkanConcatTest, MixedConcatsMatchTheCpuKernels) { expect_matches_cpu(mixed_concats()); }

// A concat of a concat (its output placed in the outer one, its inputs
// with it), one input twice, a concat along the batch axis, and a concat
// read again after a later one wrote beside it.
Graph nested_concats() {
  GraphBuilder b("nested_concats");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 8, 8}});
  const ValueId a = b.op("Sigmoid", {x});
  const ValueId c = b.op("Tanh", {x});
  const ValueId inner = b.op("Concat", {a, c}, {{"axis", int64_t{1}}});
  const ValueId d = b.op("Neg", {inner});
  const ValueId outer = b.op("Concat", {inner, b.op("Abs", {x}), d}, {{"axis", int64_t{1}}});
  const ValueId twice = b.op("Concat", {c, c}, {{"axis", int64_t{1}}});
  const ValueId batch = b.op("Concat", {b.op("Exp", {x}), a}, {{"axis", int64_t{0}}});
  b.output(b.op("Relu", {outer}));
  b.output(b.op("Relu", {twice}));
  b.output(b.op("Relu", {batch}));
  b.output(b.op("Add", {inner, inner}));  // inner read after outer's last piece was written
  return build(b);
}

TEST(VulkanConcatLoweringTest, NestedConcatsPlaceTheInnerOnesInputsInTheOuterOne) {
  const LoweredIsland l = lower(nested_concats());
  // Last first: batch places Exp(x) and a; twice places its first c and
  // copies the second; outer places inner, Abs(x) and Neg(inner); inner,
  // inside outer, copies a and c, which have places already.
  EXPECT_EQ(copies(l), 1u + 2u);
}

TEST_F(VulkanConcatTest, NestedConcatsMatchTheCpuKernels) { expect_matches_cpu(nested_concats()); }

}  // namespace
}  // namespace hetsched::vulkan
