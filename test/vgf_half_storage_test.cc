// f16 storage between the VGF delegate's kernels (`storage: fp16`,
// delegates/vgf/half_storage.h, shared_gpu/shaders/half_io.glsl): which
// resources are stored as f16, what that does to the scratch block and the
// dispatches' bindings (host only), and whole graphs through every built-in
// kernel's 16-bit variant on lavapipe with validation, against the portable
// CPU kernels. Each stored tensor rounds to f16 (2^-11 relative), so the
// bound is 1e-2 of the largest output; a binding read with the wrong type
// is off by far more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "delegates/vgf/dispatch_plan.h"
#include "delegates/vgf/half_storage.h"
#include "delegates/vgf/transient_planner.h"
#include "delegates/vgf/vgf_delegate.h"
#include "delegates/vgf/vgf_format.h"
#include "graph/builder.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vgf {
namespace {

using hetsched::testing::build;
using hetsched::testing::random_tensor;
using Ints = std::vector<int64_t>;

ValueId weights(GraphBuilder& b, const std::string& name, Shape shape, uint32_t seed, float scale = 0.3f) {
  return b.constant(name, random_tensor(shape, seed, -scale, scale));
}

// Conv + BatchNormalization + Relu, a 1x1 conv with a residual Add, a
// depthwise conv + HardSwish, max and average pools, Resize, Pad,
// ConvTranspose, GlobalAveragePool, Flatten, Gemm, Softmax. Outputs: the
// Softmax, and a Sigmoid of the ConvTranspose's every pixel.
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
// Transposes with a scaled, softmaxed product of run-time matrices, the
// heads merged back, a residual from the island input (an f32 binding beside
// f16 ones), Gather, Slice, Concat, Expand, a ReduceMean and a Where.
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
  const ValueId picked = b.op("Gather", {h, b.constant_i64("idx", {3}, {0, 2, 4})}, {{"axis", int64_t{1}}});
  const ValueId sliced = b.op("Slice", {h, b.constant_i64("st", {1}, {1}), b.constant_i64("en", {1}, {5}), b.constant_i64("ax", {1}, {1})});
  const ValueId joined = b.op("Concat", {picked, sliced}, {{"axis", int64_t{1}}});
  const ValueId mean = b.op("ReduceMean", {joined}, {{"axes", Ints{-1}}});
  const ValueId wide = b.op("Expand", {mean, b.constant_i64("es", {3}, {2, 7, 3})});
  const ValueId diff = b.op("Sub", {b.op("Slice", {joined, b.constant_i64("s0", {1}, {0}), b.constant_i64("s1", {1}, {3}),
                                                   b.constant_i64("s2", {1}, {2})}),
                                    wide});
  std::vector<uint8_t> mask(7 * 3);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 3 != 1;
  const ValueId keep = b.constant("mask", Tensor::from_vector(DType::kBool, {1, 7, 3}, mask));
  b.output(b.op("Where", {keep, b.op("Exp", {diff}), b.op("Neg", {diff})}));
  return build(b);
}

// Three 3x3 convs with K of 288 and 576 on a 4x4 image, the last two with
// a residual: few pixels and a long K, so the tiling sums K slices in f32
// partials and conv2d_reduce reads the f16 residual and writes f16.
Graph split_k() {
  GraphBuilder b("half_split_k");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 32, 4, 4}});
  auto conv = [&](ValueId in, const std::string& w, Shape shape, uint32_t seed, float scale) {
    return b.op("Conv", {in, weights(b, w, shape, seed, scale)}, {{"pads", Ints{1, 1, 1, 1}}});
  };
  const ValueId a = b.op("Relu", {conv(x, "w1", {64, 32, 3, 3}, 30, 0.1f)});
  const ValueId c = b.op("Relu", {b.op("Add", {conv(a, "w2", {64, 64, 3, 3}, 31, 0.05f), a})});
  const ValueId d = b.op("Add", {conv(c, "w3", {64, 64, 3, 3}, 32, 0.05f), c});
  b.output(b.op("Sigmoid", {d}));
  return build(b);
}

// A DenseNet block: Concats of conv outputs (each piece copied into place)
// and a grouped conv.
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
  const ValueId all = b.op("Relu", {b.op("Concat", features, {{"axis", int64_t{1}}})});
  b.output(b.op("Conv", {all, weights(b, "wg", {8, 4, 3, 3}, 50, 0.2f)}, {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{4}}}));
  return build(b);
}

Graph graph_named(const std::string& name) {
  if (name == "cnn") return cnn();
  if (name == "attention") return attention();
  if (name == "split_k") return split_k();
  return dense_block();
}

const std::vector<std::string> kGraphs = {"cnn", "attention", "split_k", "dense_block"};

DelegateOptions host_options(const std::string& storage) { return {{"storage", storage}}; }

// The VGF file the delegate compiles for all of `g` (no device needed).
VgfFile compiled(const Graph& g, Blob* blob_out = nullptr) {
  Result<std::unique_ptr<Delegate>> delegate = make_vgf_delegate(host_options("auto"));
  EXPECT_TRUE(delegate.is_ok()) << delegate.status().message();
  Result<Blob> blob = (*delegate)->compile(hetsched::testing::whole_graph_island(g, "vgf"), {});
  EXPECT_TRUE(blob.is_ok()) << blob.status().message();
  if (blob_out) *blob_out = *blob;
  Result<VgfFile> file = decode_vgf(*blob);
  EXPECT_TRUE(file.is_ok()) << file.status().message();
  return *file;
}

bool is_cast(Kernel k) {
  return k == Kernel::kCastF16ToF32 || k == Kernel::kCastF32ToF16 || k == Kernel::kCastWords ||
         k == Kernel::kCastToBool || k == Kernel::kCastFromBool;
}

TEST(VgfHalfStorageTest, OnlyIntermediatesBetweenBuiltinKernelsAreChosen) {
  for (const std::string& name : kGraphs) {
    const VgfFile file = compiled(graph_named(name));
    const std::set<uint32_t> half = choose_half_resources(file);
    EXPECT_FALSE(half.empty()) << name;
    for (uint32_t id : half) {
      EXPECT_EQ(file.resources[id].kind, ResourceKind::kIntermediate) << name << " " << file.resources[id].name;
      EXPECT_EQ(file.resources[id].dtype, DType::kFloat32) << name << " " << file.resources[id].name;
    }
    // Alias groups whole.
    for (uint32_t id : half)
      for (size_t other = 0; other < file.resources.size(); ++other) {
        if (file.resources[id].alias_group >= 0 && file.resources[other].alias_group == file.resources[id].alias_group) {
          EXPECT_EQ(half.count(static_cast<uint32_t>(other)), 1u) << name << " " << file.resources[other].name;
        }
      }
    // What a compute module (LayerNorm, Softmax) binds stays f32.
    for (const SegmentDispatches& seg : plan_dispatches(file).segments)
      for (const Dispatch& d : seg.dispatches) {
        if (d.kernel != Kernel::kCustom) continue;
        for (uint32_t id : d.bindings) EXPECT_EQ(half.count(id), 0u) << d.label;
      }
  }
}

TEST(VgfHalfStorageTest, BothSidesOfACastKeepTheirType) {
  GraphBuilder b("cast");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 6}});
  const ValueId kept = b.op("Sigmoid", {x});                     // between two kernels
  const ValueId cast_in = b.op("Tanh", {b.op("Neg", {kept})});  // a Cast reads it
  const ValueId ints = b.op("Cast", {cast_in}, {{"to", int64_t{6}}});
  b.output(b.op("Cast", {ints}, {{"to", int64_t{1}}}));
  b.output(b.op("Exp", {kept}));
  const VgfFile file = compiled(build(b));
  const std::set<uint32_t> half = choose_half_resources(file);
  size_t casts = 0;
  for (const SegmentDispatches& seg : plan_dispatches(file).segments)
    for (const Dispatch& d : seg.dispatches) {
      if (!is_cast(d.kernel)) continue;
      ++casts;
      for (uint32_t id : d.bindings) EXPECT_EQ(half.count(id), 0u) << d.label;
    }
  EXPECT_EQ(casts, 2u);
  EXPECT_FALSE(half.empty());
}

TEST(VgfHalfStorageTest, HalvesTheScratchAndMarksTheBindingsOfEveryKernel) {
  std::set<Kernel> marked_kernels;
  for (const std::string& name : kGraphs) {
    Blob blob;
    const VgfFile file = compiled(graph_named(name), &blob);
    const VgfFile halved = with_half_storage(file);
    const DispatchPlan f32 = plan_dispatches(file);
    const DispatchPlan f16 = plan_dispatches(halved);
    ASSERT_EQ(f16.dispatch_count(), f32.dispatch_count()) << name;
    Result<TransientLayout> f32_layout = plan_transients(file, f32);
    Result<TransientLayout> f16_layout = plan_transients(halved, f16);
    ASSERT_TRUE(f32_layout.is_ok() && f16_layout.is_ok()) << name;
    EXPECT_LT(f16_layout->bytes, f32_layout->bytes) << name;
    size_t marked = 0, dispatches = 0;
    for (size_t s = 0; s < f16.segments.size(); ++s)
      for (size_t i = 0; i < f16.segments[s].dispatches.size(); ++i) {
        const Dispatch& d = f16.segments[s].dispatches[i];
        EXPECT_EQ(d.kernel, f32.segments[s].dispatches[i].kernel) << d.label;
        EXPECT_EQ(f32.segments[s].dispatches[i].half_bindings, 0u) << d.label;
        const uint32_t capable = kernel_half_capable_bindings(d.kernel);
        for (size_t b = 0; b < d.bindings.size(); ++b) {
          const uint32_t id = d.bindings[b];
          const bool f16_resource = id < halved.resources.size() && halved.resources[id].dtype == DType::kFloat16;
          EXPECT_EQ((d.half_bindings >> b) & 1u, f16_resource && ((capable >> b) & 1u) ? 1u : 0u)
              << d.label << " binding " << b;
        }
        ++dispatches;
        if (d.half_bindings != 0) {
          ++marked;
          marked_kernels.insert(d.kernel);
        }
      }
    EXPECT_GT(marked, dispatches / 2) << name;
    for (uint32_t id : halved.inputs) EXPECT_EQ(halved.resources[id].dtype, DType::kFloat32) << name;
    for (uint32_t id : halved.outputs) EXPECT_EQ(halved.resources[id].dtype, DType::kFloat32) << name;

    // The delegate plans the scratch of the file init runs: fp16's is the
    // halved one, auto reserves the larger of the two.
    Result<std::unique_ptr<Delegate>> delegate = make_vgf_delegate(host_options("auto"));
    ASSERT_TRUE(delegate.is_ok());
    Result<DeviceMemoryNeeds> f32_needs = (*delegate)->device_memory(blob, {{"storage", "fp32"}});
    Result<DeviceMemoryNeeds> f16_needs = (*delegate)->device_memory(blob, {{"storage", "fp16"}});
    Result<DeviceMemoryNeeds> auto_needs = (*delegate)->device_memory(blob, {});
    ASSERT_TRUE(f32_needs.is_ok() && f16_needs.is_ok() && auto_needs.is_ok()) << name;
    EXPECT_EQ(f32_needs->scratch_bytes, f32_layout->bytes) << name;
    EXPECT_EQ(f16_needs->scratch_bytes, f16_layout->bytes) << name;
    EXPECT_EQ(auto_needs->scratch_bytes, std::max(f32_layout->bytes, f16_layout->bytes)) << name;
    EXPECT_EQ(f16_needs->input_bytes, f32_needs->input_bytes) << name;
    EXPECT_EQ(f16_needs->output_bytes, f32_needs->output_bytes) << name;
    // The delegate's own storage where the load-time specs name none.
    Result<std::unique_ptr<Delegate>> fp16_delegate = make_vgf_delegate(host_options("fp16"));
    ASSERT_TRUE(fp16_delegate.is_ok());
    Result<DeviceMemoryNeeds> own_needs = (*fp16_delegate)->device_memory(blob, {});
    ASSERT_TRUE(own_needs.is_ok()) << name;
    EXPECT_EQ(own_needs->scratch_bytes, f16_layout->bytes) << name;
  }
  for (Kernel k : {Kernel::kUnary, Kernel::kBinary, Kernel::kCopy, Kernel::kPad, Kernel::kConv2d, Kernel::kConv2dReduce,
                   Kernel::kDepthwiseConv2d, Kernel::kPool2d, Kernel::kMatmul, Kernel::kReduce, Kernel::kResize,
                   Kernel::kSelect, Kernel::kTransposeConv2d})
    EXPECT_EQ(marked_kernels.count(k), 1u) << kernel_name(k) << " runs no f16 binding in these graphs";
}

TEST(VgfHalfStorageTest, AnUnknownStorageIsRefusedByName) {
  Result<std::unique_ptr<Delegate>> delegate = make_vgf_delegate(host_options("fp8"));
  ASSERT_FALSE(delegate.is_ok());
  EXPECT_NE(delegate.status().message().find("option storage is 'fp8'"), std::string::npos)
      << delegate.status().message();
  EXPECT_TRUE(make_vgf_delegate(host_options("fp16")).is_ok());
}

constexpr char kToken[] = "vgf_half_test";
constexpr char kKey[] = "vgf_half_test:0";

class VgfHalfStorageGpuTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    std::shared_ptr<SharedGpuContext> context = make_context();
    ASSERT_NE(context, nullptr);
    if (!context->features().storage_buffer_16bit_access) GTEST_SKIP() << "no storageBuffer16BitAccess";
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context(kKey, context).is_ok());
  }

  void expect_matches_cpu(const Graph& g) {
    Result<std::unique_ptr<Delegate>> delegate =
        make_vgf_delegate({{"gpu_shared_context_token", kToken}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < g.inputs().size(); ++i)
      inputs.push_back(random_tensor(g.value(g.inputs()[i]).type.shape, 200 + static_cast<uint32_t>(i)));
    Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    Result<hetsched::testing::GpuIslandDriver> driver =
        hetsched::testing::GpuIslandDriver::create(**delegate, g, {{{"storage", "fp16"}}, 0});
    ASSERT_TRUE(driver.is_ok()) << driver.status().message();
    Result<std::vector<Tensor>> got = driver->run(inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size(); ++i) {
      const float* w = (*want)[i].data<float>();
      float scale = 0;
      for (int64_t e = 0; e < (*want)[i].num_elements(); ++e) scale = std::max(scale, std::fabs(w[e]));
      const float err = hetsched::testing::max_abs_diff((*got)[i], (*want)[i]);
      std::cout << "[vgf half] " << g.name() << " output " << i << ": max abs error " << err << " (max |y| " << scale
                << ")\n";
      EXPECT_LE(err, 1e-2f * scale) << g.name() << " output " << i;
    }
  }
};

TEST_F(VgfHalfStorageGpuTest, ACnnThroughEveryConvAndPoolKernelMatchesTheCpuKernels) { expect_matches_cpu(cnn()); }

TEST_F(VgfHalfStorageGpuTest, AttentionThroughMatmulCopiesAndSelectMatchesTheCpuKernels) {
  expect_matches_cpu(attention());
}

TEST_F(VgfHalfStorageGpuTest, SplitKConvsWithResidualsMatchTheCpuKernels) { expect_matches_cpu(split_k()); }

TEST_F(VgfHalfStorageGpuTest, ConcatsAndAGroupedConvMatchTheCpuKernels) { expect_matches_cpu(dense_block()); }

// A host lends its device without storageBuffer16BitAccess enabled: storage
// fp16 is refused at init naming the feature; auto keeps f32 and runs.
class VgfHalfStorageRefusalTest : public hetsched::testing::VkTest {};

TEST_F(VgfHalfStorageRefusalTest, ADeviceWithoutStorageBuffer16BitAccessRefusesFp16AndAutoRunsF32) {
  std::shared_ptr<SharedGpuContext> host = make_context();
  ASSERT_NE(host, nullptr);
  SharedGpuContextCreateInfo info = hetsched::testing::lend_info(*host);
  info.enabled_features.storage_buffer_16bit_access = false;
  struct Unregister {
    ~Unregister() { SharedGpuContextRegistry::get().clear_for_testing(); }
  } unregister;
  auto borrowed = SharedGpuContext::borrow(info);
  ASSERT_TRUE(borrowed.is_ok()) << borrowed.status().message();
  ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("vgf_half_lent:0", *borrowed).is_ok());
  Result<std::unique_ptr<Delegate>> delegate =
      make_vgf_delegate({{"gpu_shared_context_token", "vgf_half_lent"}, {"gpu_shared_context_mode", "lookup_only"}});
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
  EXPECT_TRUE(f32->run({random_tensor({1, 32, 4, 4}, 1)}).is_ok());
}

}  // namespace
}  // namespace hetsched::vgf
