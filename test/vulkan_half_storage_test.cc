// f16 storage between the Vulkan delegate's kernels (`storage: fp16`,
// delegates/vulkan/half_storage.h, shared_gpu/shaders/half_io.glsl): which
// values are stored as f16, what that does to the island's buffers and
// bindings (host only), and whole graphs through every kernel's 16-bit
// variant on lavapipe with validation, against the portable CPU kernels.
// Each stored tensor rounds to f16 (2^-11 relative), so the bound is 1e-2
// of the largest output; a binding read with the wrong type is off by far
// more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "delegates/vulkan/half_storage.h"
#include "delegates/vulkan/lowering.h"
#include "delegates/vulkan/vulkan_delegate.h"
#include "graph/builder.h"
#include "shared_gpu/precision.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "test/half_storage_graphs.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vulkan {
namespace {

using hetsched::testing::build;
using hetsched::testing::random_tensor;
namespace half_graphs = hetsched::testing::half_graphs;
using Ints = std::vector<int64_t>;

using half_graphs::attention;
using half_graphs::cnn;
using half_graphs::dense_block;
using half_graphs::split_k;

Result<LoweredIsland> lower(const Graph& g, bool half) {
  LoweringOptions options;
  options.half_storage = half;
  return lower_island(g, options);
}

TEST(HalfStorageTest, OnlyValuesBetweenKernelsAreChosen) {
  const Graph g = cnn();
  const std::set<ValueId> half = choose_half_values(g);
  EXPECT_FALSE(half.empty());
  for (ValueId v : g.inputs()) EXPECT_EQ(half.count(v), 0u) << g.value(v).name;
  for (ValueId v : g.outputs()) EXPECT_EQ(half.count(v), 0u) << g.value(v).name;
  for (ValueId v : half) {
    EXPECT_FALSE(g.value(v).is_constant()) << g.value(v).name;
    EXPECT_EQ(g.value(v).type.dtype, DType::kFloat32) << g.value(v).name;
  }
}

TEST(HalfStorageTest, AnAliasOfAnEdgeAndACastKeepTheirType) {
  GraphBuilder b("edges");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 6}});
  const ValueId inner = b.op("Relu", {x});                  // read by an alias that is an output
  const ValueId kept = b.op("Sigmoid", {x});                // between two kernels
  const ValueId cast_in = b.op("Tanh", {b.op("Neg", {kept})});  // a Cast reads it
  b.output(b.op("Reshape", {inner, b.constant_i64("s", {1}, {12})}));
  b.output(b.op("Cast", {cast_in}, {{"to", int64_t{6}}}));  // to int32
  b.output(b.op("Exp", {kept}));
  const Graph g = build(b);
  const std::set<ValueId> half = choose_half_values(g);
  EXPECT_EQ(half.count(inner), 0u);
  EXPECT_EQ(half.count(cast_in), 0u);
  EXPECT_EQ(half.count(kept), 1u);
}

TEST(HalfStorageTest, HalvesTheIntermediatesAndMarksTheirBindings) {
  for (const Graph& g : {cnn(), attention(), dense_block()}) {
    Result<LoweredIsland> f32 = lower(g, false);
    Result<LoweredIsland> f16 = lower(g, true);
    ASSERT_TRUE(f32.is_ok() && f16.is_ok()) << g.name();
    EXPECT_EQ(f16->dispatch_count(), f32->dispatch_count()) << g.name();
    EXPECT_LT(f16->scratch_bytes, f32->scratch_bytes) << g.name();
    size_t marked = 0;
    for (const Step& s : f16->steps) {
      for (size_t i = 0; i < s.bindings.size(); ++i)
        EXPECT_EQ((s.half_bindings >> i) & 1u, f16->buffers[s.bindings[i]].half ? 1u : 0u) << s.label;
      marked += s.half_bindings != 0;
    }
    EXPECT_GT(marked, f16->dispatch_count() / 2) << g.name();
    for (int b : f16->input_buffers) EXPECT_FALSE(f16->buffers[b].half);
    for (int b : f16->output_buffers) EXPECT_FALSE(f16->buffers[b].half);
    for (const Step& s : f32->steps) EXPECT_EQ(s.half_bindings, 0u) << s.label;
  }
}

class HalfStorageGpuTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    std::shared_ptr<SharedGpuContext> context = make_context();
    ASSERT_NE(context, nullptr);
    if (!context->features().storage_buffer_16bit_access) GTEST_SKIP() << "no storageBuffer16BitAccess";
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("vulkan_half_test:0", context).is_ok());
  }

  void expect_matches_cpu(const Graph& g, const std::string& tiling = "auto") {
    Result<std::unique_ptr<Delegate>> delegate =
        make_vulkan_delegate({{"gpu_shared_context_token", "vulkan_half_test"}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    half_graphs::expect_half_run_matches_cpu(**delegate, g, {{"storage", "fp16"}, {"conv_tiling", tiling}}, "half");
  }
};

TEST_F(HalfStorageGpuTest, ACnnThroughEveryConvAndPoolKernelMatchesTheCpuKernels) { expect_matches_cpu(cnn()); }

TEST_F(HalfStorageGpuTest, AttentionThroughStridedReadsAndMovementMatchesTheCpuKernels) {
  expect_matches_cpu(attention());
}

TEST_F(HalfStorageGpuTest, SplitKConvsWithResidualsMatchTheCpuKernels) { expect_matches_cpu(split_k(), "64x64/3"); }

TEST_F(HalfStorageGpuTest, ConcatsWrittenInPlaceMatchTheCpuKernels) { expect_matches_cpu(dense_block()); }

// A host lends its device without storageBuffer16BitAccess enabled: storage
// fp16 is refused at init naming the feature; auto keeps f32 and runs.
class HalfStorageRefusalTest : public hetsched::testing::VkTest {};

TEST_F(HalfStorageRefusalTest, ADeviceWithoutStorageBuffer16BitAccessRefusesFp16AndAutoRunsF32) {
  std::shared_ptr<SharedGpuContext> host = make_context();
  ASSERT_NE(host, nullptr);
  half_graphs::expect_fp16_storage_refused_without_the_feature(
      *host, "half_lent", [](const DelegateOptions& options) { return make_vulkan_delegate(options); });
}

// `auto` keeps f32 between kernels even where the device could store f16
// (docs/models.md: no speed on the H200, det's accuracy lost); only `fp16`
// asks for it. Both delegates resolve the option through resolve_storage.
TEST_F(HalfStorageRefusalTest, AutoKeepsF32OnADeviceWithTheFeature) {
  std::shared_ptr<SharedGpuContext> context = make_context();
  ASSERT_NE(context, nullptr);
  ASSERT_TRUE(context->features().storage_buffer_16bit_access) << "lavapipe has it; the test needs a device that does";
  for (const char* storage : {"auto", "fp32"}) {
    Result<bool> half = resolve_storage(storage, *context);
    ASSERT_TRUE(half.is_ok()) << half.status().message();
    EXPECT_FALSE(*half) << storage;
  }
  Result<bool> half = resolve_storage("fp16", *context);
  ASSERT_TRUE(half.is_ok()) << half.status().message();
  EXPECT_TRUE(*half);
}

}  // namespace
}  // namespace hetsched::vulkan
