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
#include "shared_gpu/shared_gpu_registry.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vulkan {
namespace {

using hetsched::testing::build;
using hetsched::testing::random_tensor;
using Ints = std::vector<int64_t>;

ValueId weights(GraphBuilder& b, const std::string& name, Shape shape, uint32_t seed, float scale = 0.3f) {
  return b.constant(name, random_tensor(shape, seed, -scale, scale));
}

// Conv + BatchNormalization + Relu, a 1x1 conv with a residual Add, a
// depthwise conv + HardSwish, max and average pools, Resize, Pad,
// ConvTranspose, GlobalAveragePool, Flatten, Gemm, Softmax: every value
// between them is stored as f16. Outputs: the Softmax, and a Sigmoid of the
// ConvTranspose's every pixel.
Graph cnn() {
  GraphBuilder b("half_cnn");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 8, 13, 11}});
  ValueId a = b.op("Conv", {x, weights(b, "w1", {16, 8, 3, 3}, 1), weights(b, "b1", {16}, 2)}, {{"pads", Ints{1, 1, 1, 1}}});
  a = b.op("BatchNormalization", {a, b.constant("s", random_tensor({16}, 3, 0.5f, 1.5f)), weights(b, "bb", {16}, 4),
                                  weights(b, "m", {16}, 5), b.constant("v", random_tensor({16}, 6, 0.5f, 2.f))});
  a = b.op("Relu", {a});
  ValueId r = b.op("Conv", {a, weights(b, "w2", {16, 16, 1, 1}, 7)});
  r = b.op("Relu", {b.op("Add", {r, a})});
  ValueId d = b.op("Conv", {r, weights(b, "w3", {16, 1, 3, 3}, 8)}, {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{16}}});
  d = b.op("HardSwish", {d});
  const ValueId m = b.op("MaxPool", {d}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  const ValueId p = b.op("AveragePool", {m}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
  const ValueId z = b.op("Resize", {p, kNoValue, b.constant_f32("sc", {4}, {1, 1, 2, 2})}, {{"mode", std::string("linear")}});
  const ValueId q = b.op("Pad", {z, b.constant_i64("pads", {8}, {0, 0, 1, 0, 0, 0, 1, 2}), b.constant_f32("pv", {}, {0.25f})});
  const ValueId t = b.op("ConvTranspose", {q, weights(b, "w4", {16, 4, 2, 2}, 9)}, {{"strides", Ints{2, 2}}});
  b.output(b.op("Sigmoid", {t}));  // every pixel, so an error upstream is not averaged away
  const ValueId g = b.op("Flatten", {b.op("GlobalAveragePool", {t})});
  const ValueId y = b.op("Gemm", {g, weights(b, "w5", {4, 10}, 10), weights(b, "b5", {10}, 11)});
  b.output(b.op("Softmax", {y}, {{"axis", int64_t{1}}}));
  return build(b);
}

// A LayerNorm, three projections, attention through Reshapes and
// Transposes (read through strides) with a scaled, softmaxed product, the
// heads merged back, a residual from the island input (an f32 binding beside
// f16 ones), Gather, Slice, Concat, Expand and a ReduceMean.
Graph attention() {
  GraphBuilder b("half_attention");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 7, 24}});
  const ValueId n = b.op("LayerNormalization", {x, b.constant("g", random_tensor({24}, 20, 0.5f, 1.5f)), weights(b, "be", {24}, 21)},
                         {{"axis", int64_t{-1}}});
  auto heads = [&](const std::string& name, uint32_t seed, Ints perm) {
    const ValueId proj = b.op("MatMul", {n, weights(b, name, {24, 24}, seed)});
    return b.op("Transpose", {b.op("Reshape", {proj, b.constant_i64(name + "s", {4}, {2, 7, 4, 6})})}, {{"perm", perm}});
  };
  const ValueId q = heads("wq", 22, {0, 2, 1, 3});
  const ValueId kt = heads("wk", 23, {0, 2, 3, 1});
  const ValueId v = heads("wv", 24, {0, 2, 1, 3});
  const ValueId s = b.op("Softmax", {b.op("Div", {b.op("MatMul", {q, kt}), b.constant_f32("d", {}, {2.449f})})}, {{"axis", int64_t{-1}}});
  const ValueId o = b.op("MatMul", {s, v});
  const ValueId merged = b.op("Reshape", {b.op("Transpose", {o}, {{"perm", Ints{0, 2, 1, 3}}}), b.constant_i64("ms", {3}, {2, 7, 24})});
  const ValueId h = b.op("Tanh", {b.op("Add", {merged, x})});
  const ValueId picked = b.op("Gather", {h, b.constant_i64("idx", {3}, {6, 0, 3})}, {{"axis", int64_t{1}}});
  const ValueId sliced = b.op("Slice", {h, b.constant_i64("st", {1}, {1}), b.constant_i64("en", {1}, {5}), b.constant_i64("ax", {1}, {1})});
  const ValueId joined = b.op("Concat", {picked, sliced}, {{"axis", int64_t{1}}});
  const ValueId mean = b.op("ReduceMean", {joined}, {{"axes", Ints{-1}}});
  const ValueId wide = b.op("Expand", {mean, b.constant_i64("es", {3}, {2, 7, 3})});
  b.output(b.op("Sub", {b.op("Slice", {joined, b.constant_i64("s0", {1}, {0}), b.constant_i64("s1", {1}, {3}),
                                       b.constant_i64("s2", {1}, {2})}),
                        wide}));
  return build(b);
}

// Three 3x3 convs with K of 288 and 576 on a 6x6 image, the last two with
// a residual: under conv_tiling 64x64/3 each sums three K slices in f32
// partials, and conv2d_reduce reads the f16 residual and writes f16.
Graph split_k() {
  GraphBuilder b("half_split_k");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 32, 6, 6}});
  auto conv = [&](ValueId in, const std::string& w, Shape shape, uint32_t seed, float scale) {
    return b.op("Conv", {in, weights(b, w, shape, seed, scale)}, {{"pads", Ints{1, 1, 1, 1}}});
  };
  const ValueId a = b.op("Relu", {conv(x, "w1", {64, 32, 3, 3}, 30, 0.1f)});
  const ValueId c = b.op("Relu", {b.op("Add", {conv(a, "w2", {64, 64, 3, 3}, 31, 0.05f), a})});
  const ValueId d = b.op("Add", {conv(c, "w3", {64, 64, 3, 3}, 32, 0.05f), c});
  b.output(b.op("Sigmoid", {d}));
  return build(b);
}

// A DenseNet block: Concats whose inputs are written in place, as f16.
Graph dense_block() {
  GraphBuilder b("half_dense");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
  std::vector<ValueId> features = {b.op("Conv", {x, weights(b, "w0", {4, 3, 3, 3}, 40)}, {{"pads", Ints{1, 1, 1, 1}}})};
  for (int k = 1; k <= 3; ++k) {
    const ValueId in = features.size() == 1 ? features[0] : b.op("Concat", features, {{"axis", int64_t{1}}});
    const ValueId w = weights(b, "w" + std::to_string(k), {4, 4 * static_cast<int64_t>(features.size()), 3, 3},
                              40 + static_cast<uint32_t>(k), 0.2f);
    features.push_back(b.op("Conv", {b.op("Relu", {in}), w}, {{"pads", Ints{1, 1, 1, 1}}}));
  }
  b.output(b.op("Relu", {b.op("Concat", features, {{"axis", int64_t{1}}})}));
  return build(b);
}

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
    Result<std::unique_ptr<Delegate>> delegate = make_vulkan_delegate(
        {{"gpu_shared_context_token", "vulkan_half_test"}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < g.inputs().size(); ++i)
      inputs.push_back(random_tensor(g.value(g.inputs()[i]).type.shape, 200 + static_cast<uint32_t>(i)));
    Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    Result<hetsched::testing::GpuIslandDriver> driver = hetsched::testing::GpuIslandDriver::create(
        **delegate, g, {{{"storage", "fp16"}, {"conv_tiling", tiling}}, 0});
    ASSERT_TRUE(driver.is_ok()) << driver.status().message();
    Result<std::vector<Tensor>> got = driver->run(inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i) {
      const float* w = (*want)[i].data<float>();
      float scale = 0;
      for (int64_t e = 0; e < (*want)[i].num_elements(); ++e) scale = std::max(scale, std::fabs(w[e]));
      const float err = hetsched::testing::max_abs_diff((*got)[i], (*want)[i]);
      std::cout << "[half] " << g.name() << " output " << i << ": max abs error " << err << " (max |y| " << scale
                << ")\n";
      EXPECT_LE(err, 1e-2f * scale) << g.name() << " output " << i;
    }
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
  SharedGpuContextCreateInfo info = hetsched::testing::lend_info(*host);
  info.enabled_features.storage_buffer_16bit_access = false;
  struct Unregister {
    ~Unregister() { SharedGpuContextRegistry::get().clear_for_testing(); }
  } unregister;
  auto borrowed = SharedGpuContext::borrow(info);
  ASSERT_TRUE(borrowed.is_ok()) << borrowed.status().message();
  ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("half_lent:0", *borrowed).is_ok());
  Result<std::unique_ptr<Delegate>> delegate =
      make_vulkan_delegate({{"gpu_shared_context_token", "half_lent"}, {"gpu_shared_context_mode", "lookup_only"}});
  ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
  const Graph g = split_k();
  Result<hetsched::testing::GpuIslandDriver> refused =
      hetsched::testing::GpuIslandDriver::create(**delegate, g, {{{"storage", "fp16"}}, 0});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("storage fp16 needs storageBuffer16BitAccess, which device"),
            std::string::npos)
      << refused.status().message();
  Result<hetsched::testing::GpuIslandDriver> f32 =
      hetsched::testing::GpuIslandDriver::create(**delegate, g, {{{"storage", "auto"}}, 0});
  ASSERT_TRUE(f32.is_ok()) << f32.status().message();
  EXPECT_TRUE(f32->run({random_tensor({1, 32, 6, 6}, 1)}).is_ok());
}

}  // namespace
}  // namespace hetsched::vulkan
