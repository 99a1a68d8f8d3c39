// The Vulkan delegate's `precision` option: how it picks the tensor-core
// conv (conv2d_coopmat.comp), how that lowers, that a device without
// cooperative matrices refuses fp16 by reason and runs auto in f32 — and,
// on a device that has them (the NVIDIA GPU machine; lavapipe has none, so
// there it is skipped), that fp16 convs match the portable CPU kernels
// within f16 operand rounding and really differ from the f32 kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "delegates/vgf/vgf_delegate.h"
#include "delegates/vulkan/lowering.h"
#include "delegates/vulkan/vulkan_delegate.h"
#include "graph/builder.h"
#include "shared_gpu/device_info.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vulkan {
namespace {

using hetsched::testing::random_tensor;
using Ints = std::vector<int64_t>;

TEST(CoopmatShapeTest, PicksSixteenCubedElseAShapeThatTilesSixtyFour) {
  const std::vector<CoopMatShape> nvidia = {{16, 8, 16, "f16", "f16", "f16", "f16"},
                                            {16, 16, 16, "f16", "f16", "f32", "f32"},
                                            {16, 8, 8, "f16", "f16", "f32", "f32"}};
  ASSERT_NE(pick_f16_coopmat_shape(nvidia), nullptr);
  EXPECT_EQ(pick_f16_coopmat_shape(nvidia)->text(), "16x16x16 f16*f16+f32->f32");
  const std::vector<CoopMatShape> small = {{16, 8, 8, "f16", "f16", "f32", "f32"}};
  ASSERT_NE(pick_f16_coopmat_shape(small), nullptr);
  EXPECT_EQ(pick_f16_coopmat_shape(small)->n, 8u);
  // f16 accumulation, integer types and shapes that do not tile 64 x 64 by 16 are not used.
  const std::vector<CoopMatShape> none = {{16, 16, 16, "f16", "f16", "f16", "f16"},
                                          {16, 16, 32, "s8", "s8", "s32", "s32"},
                                          {48, 16, 16, "f16", "f16", "f32", "f32"},
                                          {16, 16, 32, "f16", "f16", "f32", "f32"}};
  EXPECT_EQ(pick_f16_coopmat_shape(none), nullptr);
}

TEST(CoopmatShapeTest, SubgroupGridCoversTheTileInWholeFragments) {
  // 8 subgroups of 32 on a 64 x 64 tile: 2 x 4 (each 32 channels x 16 pixels).
  EXPECT_EQ(coopmat_specialization({16, 16, 16, 32}, 64, 64), (std::vector<uint32_t>{2, 4, 16, 16, 16}));
  EXPECT_EQ(coopmat_specialization({16, 16, 16, 32}, 128, 128), (std::vector<uint32_t>{2, 4, 16, 16, 16}));
  // 4 subgroups of 64 (AMD's wave64) on 128 x 64: 2 x 2.
  EXPECT_EQ(coopmat_specialization({16, 16, 16, 64}, 128, 64), (std::vector<uint32_t>{2, 2, 16, 16, 16}));
  // 16 x 8 x 8 fragments.
  EXPECT_EQ(coopmat_specialization({16, 8, 8, 32}, 64, 64), (std::vector<uint32_t>{2, 4, 16, 8, 8}));
  // A subgroup size that does not divide 256, or a k that does not divide 16: none.
  EXPECT_TRUE(coopmat_specialization({16, 16, 16, 48}, 64, 64).empty());
  EXPECT_TRUE(coopmat_specialization({16, 16, 32, 32}, 64, 64).empty());
  // 256 subgroups of 1 cannot all hold a 16 x 16 fragment of a 64 x 64 tile.
  EXPECT_TRUE(coopmat_specialization({16, 16, 16, 1}, 64, 64).empty());
}

using hetsched::testing::build;

Graph conv_net() {
  GraphBuilder b("coopmat_net");
  ValueId x = b.input("x", {DType::kFloat32, {1, 32, 9, 11}});
  ValueId y = b.op("Conv", {x, b.constant("w0", random_tensor({48, 32, 3, 3}, 1)), b.constant("b0", random_tensor({48}, 2))});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("pads", Ints{1, 1, 1, 1});
  y = b.op("Relu", {y});
  // Depthwise: stays on depthwise_conv2d.comp.
  y = b.op("Conv", {y, b.constant("w1", random_tensor({48, 1, 3, 3}, 3))});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("group", int64_t{48});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("pads", Ints{1, 1, 1, 1});
  // Channel-major K (20 channels per group), strided.
  y = b.op("Conv", {y, b.constant("w2", random_tensor({40, 24, 3, 3}, 4))});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("group", int64_t{2});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("strides", Ints{2, 2});
  // A residual block's tail: the Add joins the conv (conv_finish.glsl).
  const ValueId z = b.op("Conv", {y, b.constant("w3", random_tensor({40, 40, 3, 3}, 5, -0.05f, 0.05f))});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("pads", Ints{1, 1, 1, 1});
  b.output(b.op("Relu", {b.op("Add", {z, y})}));
  return build(b);
}

TEST(CoopmatLoweringTest, SwapsTheKernelOfEveryNonDepthwiseConvAndKeepsTheBuffers) {
  const Graph g = conv_net();
  Result<LoweredIsland> f32 = lower_island(g, {});
  Result<LoweredIsland> f16 = lower_island(g, LoweringOptions{std::nullopt, CoopMatConv{16, 16, 16, 32}});
  ASSERT_TRUE(f32.is_ok() && f16.is_ok());
  ASSERT_EQ(f32->steps.size(), f16->steps.size());
  int swapped = 0;
  for (size_t i = 0; i < f32->steps.size(); ++i) {
    const Step& a = f32->steps[i];
    const Step& b = f16->steps[i];
    EXPECT_EQ(a.bindings, b.bindings);
    EXPECT_EQ(a.groups, b.groups);
    if (a.kernel == Kernel::kConv2d) {
      EXPECT_EQ(b.kernel, Kernel::kConv2dCoopmat);
      ASSERT_EQ(b.specialization.size(), a.specialization.size() + 5);
      EXPECT_TRUE(std::equal(a.specialization.begin(), a.specialization.end(), b.specialization.begin()));
      ++swapped;
    } else {
      EXPECT_EQ(a.kernel, b.kernel);
    }
  }
  EXPECT_EQ(swapped, 3);
  ASSERT_EQ(f32->buffers.size(), f16->buffers.size());
  for (size_t i = 0; i < f32->buffers.size(); ++i) EXPECT_EQ(f32->buffers[i].bytes, f16->buffers[i].bytes);
}

// The session plans an island's scratch from device_memory, which lowers
// without a device; at init a precision that may use the tensor cores
// lowers with their smaller conv tiles. The reserved scratch covers both.
TEST(CoopmatLoweringTest, DeviceMemoryReservesTheLargerScratchOfBothLowerings) {
  const Graph g = conv_net();
  Result<LoweredIsland> f32 = lower_island(g, {});
  Result<LoweredIsland> f16 = lower_island(g, LoweringOptions{std::nullopt, CoopMatConv{}});
  ASSERT_TRUE(f32.is_ok() && f16.is_ok());
  Result<std::unique_ptr<Delegate>> delegate = make_vulkan_delegate({});
  ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
  Result<Blob> blob = (*delegate)->compile(hetsched::testing::whole_graph_island(g, "vulkan"), {});
  ASSERT_TRUE(blob.is_ok()) << blob.status().message();
  for (const char* precision : {"fp32", "fp16", "auto"}) {
    SCOPED_TRACE(precision);
    Result<DeviceMemoryNeeds> needs = (*delegate)->device_memory(*blob, {{"precision", precision}});
    ASSERT_TRUE(needs.is_ok()) << needs.status().message();
    const uint64_t want = std::string(precision) == "fp32" ? f32->scratch_bytes
                                                           : std::max(f32->scratch_bytes, f16->scratch_bytes);
    EXPECT_EQ(needs->scratch_bytes, want);
  }
}

// MatMuls of two run-time operands (batched, broadcasting, odd sizes) and a
// Gemm with transposed operands and a C matrix: gemm.comp's work.
Graph matmul_net() {
  GraphBuilder b("coopmat_matmul_net");
  ValueId a = b.input("a", {DType::kFloat32, {2, 3, 150, 72}});
  ValueId bb = b.input("b", {DType::kFloat32, {3, 72, 136}});
  ValueId y = b.op("MatMul", {a, bb});  // [2,3,150,136]: vec4 loads of both
  ValueId p = b.input("p", {DType::kFloat32, {37, 21}});
  ValueId q = b.input("q", {DType::kFloat32, {45, 37}});
  ValueId g = b.op("Gemm", {p, q, b.constant("c", random_tensor({21, 45}, 5))});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("transA", int64_t{1});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("transB", int64_t{1});
  b.raw().node(b.raw().num_nodes() - 1).attrs.set("alpha", 0.5f);
  b.output(y);
  b.output(g);
  return build(b);
}

TEST(CoopmatLoweringTest, MatMulsOfRunTimeOperandsRunGemmCoopmatWithTilesAndLoadsByShape) {
  const Graph g = matmul_net();
  Result<LoweredIsland> f32 = lower_island(g, {});
  Result<LoweredIsland> f16 = lower_island(g, LoweringOptions{std::nullopt, CoopMatConv{16, 16, 16, 32}});
  ASSERT_TRUE(f32.is_ok() && f16.is_ok()) << f32.status().message() << f16.status().message();
  ASSERT_EQ(f32->steps.size(), f16->steps.size());
  std::vector<std::vector<uint32_t>> specs;
  for (size_t i = 0; i < f32->steps.size(); ++i) {
    const Step& a = f32->steps[i];
    const Step& b = f16->steps[i];
    EXPECT_EQ(a.bindings, b.bindings);
    if (a.kernel != Kernel::kGemm) {
      EXPECT_EQ(a.kernel, b.kernel);
      continue;
    }
    EXPECT_EQ(b.kernel, Kernel::kGemmCoopmat);
    specs.push_back(b.specialization);
    // The grid covers the output in the chosen tiles, one z per batch.
    EXPECT_EQ(b.groups[2], a.groups[2]);
  }
  ASSERT_EQ(specs.size(), 2u);
  // 150 x 136 outputs in 6 batches: 128-tiles would make 24 workgroups, so
  // both sides drop to 64; K = 72 and N = 136 are multiples of 4: vec4 loads.
  EXPECT_EQ(specs[0], (std::vector<uint32_t>{64, 64, 1, 1, 2, 4, 16, 16, 16}));
  // Gemm: A read transposed (column stride 21 elements), B transposed too.
  EXPECT_EQ(specs[1], (std::vector<uint32_t>{64, 64, 0, 0, 2, 4, 16, 16, 16}));
}

// The first dispatch's kernel and specialisation for MatMul `a` x `b` (b
// constant when `weights`); fp16_product_step at fp16 with 16 x 16 x 16
// fragments and subgroups of 32.
std::pair<Kernel, std::vector<uint32_t>> product_step(const Shape& a, const Shape& b, bool weights,
                                                      const LoweringOptions& options) {
  GraphBuilder gb("product");
  ValueId x = gb.input("a", {DType::kFloat32, a});
  ValueId w = weights ? gb.constant("w", random_tensor(b, 3)) : gb.input("b", {DType::kFloat32, b});
  gb.output(gb.op("MatMul", {x, w}));
  Result<LoweredIsland> lowered = lower_island(build(gb), options);
  EXPECT_TRUE(lowered.is_ok()) << lowered.status().message();
  if (!lowered.is_ok()) return {};
  for (const Step& step : lowered->steps)
    if (step.kind == Step::Kind::kDispatch) return {step.kernel, step.specialization};
  return {};
}

std::pair<Kernel, std::vector<uint32_t>> fp16_product_step(const Shape& a, const Shape& b, bool weights) {
  return product_step(a, b, weights, LoweringOptions{std::nullopt, CoopMatConv{16, 16, 16, 32}});
}

TEST(CoopmatLoweringTest, GemmTilesGrowWithTheWorkAndLongLinearLayersLeaveTheConvKernel) {
  // 1024 x 1024 outputs: 64 workgroups of 128 x 128 on gemm_coopmat_fixed (vec4 and octet loads of both).
  EXPECT_EQ(fp16_product_step({1024, 256}, {256, 1024}, false),
            std::make_pair(Kernel::kGemmCoopmat128x128, std::vector<uint32_t>{1, 1, 1, 1, 0}));
  // Where 16x16x16 fragments are not offered, gemm_coopmat_1024's 128 x 128
  // (1024 invocations, a 4 x 8 grid of subgroups of two fragments).
  EXPECT_EQ(product_step({1024, 256}, {256, 1024}, false, LoweringOptions{std::nullopt, CoopMatConv{16, 16, 8, 32}}),
            std::make_pair(Kernel::kGemmCoopmat1024, std::vector<uint32_t>{128, 128, 1, 1, 4, 8, 16, 16, 8}));
  // ViT's 197 x 768 -> 3072 linear layer: 96 workgroups of 64 x 128 (512 invocations).
  EXPECT_EQ(fp16_product_step({1, 197, 768}, {768, 3072}, true),
            std::make_pair(Kernel::kGemmCoopmat512, std::vector<uint32_t>{64, 128, 1, 1, 2, 8, 16, 16, 16}));
  // Few outputs: 64 x 64 (256 invocations); A's rows of 30 are not 16-byte aligned.
  EXPECT_EQ(fp16_product_step({100, 30}, {30, 300}, false),
            std::make_pair(Kernel::kGemmCoopmat, std::vector<uint32_t>{64, 64, 0, 1, 2, 4, 16, 16, 16}));
  // A classifier's one row runs pointwise_conv.comp (2M multiply-adds, K
  // split inside the workgroup; before session 14 the conv kernel and its
  // split-K); a longer one too many for it, 64 x 2048 -> 1000 (131M), keeps
  // the tensor-core conv kernel.
  EXPECT_EQ(fp16_product_step({1, 2048}, {2048, 1000}, true).first, Kernel::kPointwiseConv);
  EXPECT_EQ(fp16_product_step({64, 2048}, {2048, 1000}, true).first, Kernel::kConv2dCoopmat);
  // A device that runs at most 512 invocations per workgroup gets 64 x 128 tiles instead.
  EXPECT_EQ(product_step({1024, 256}, {256, 1024}, false,
                         LoweringOptions{std::nullopt, CoopMatConv{16, 16, 8, 32, 512, 48 * 1024}})
                .first,
            Kernel::kGemmCoopmat512);
  // At f32 every linear layer runs on the conv kernel.
  EXPECT_EQ(product_step({1, 197, 768}, {768, 3072}, true, {}).first, Kernel::kConv2d);
}

// gemm_coopmat_fixed.glsl's kernels: compiled for 16x16x16 fragments and
// subgroups of 32, so only a device that offers both runs them.
LoweringOptions fixed_gemm_options(std::optional<Kernel> kernel, CoopMatConv coopmat = {16, 16, 16, 32}) {
  LoweringOptions options{std::nullopt, coopmat};
  options.gemm_kernel = kernel;
  return options;
}

TEST(CoopmatLoweringTest, FixedGemmKernelsRunWhereTheDeviceHasTheirFragmentsAndSubgroups) {
  // 4096^3 and 2048^3: 512 and 128 workgroups of 128 x 256; vec4 and octet loads of both operands.
  for (int64_t n : {4096, 2048})
    EXPECT_EQ(fp16_product_step({n, n}, {n, n}, false),
              std::make_pair(Kernel::kGemmCoopmat128x256, std::vector<uint32_t>{1, 1, 1, 1, 0}));
  // 1030 x 40 x 1030: 45 workgroups of 128 x 256 are too few, 81 of 128 x
  // 128 enough; B's rows of 1030 take neither vec4s nor octets, A's rows of 40 both.
  EXPECT_EQ(fp16_product_step({1030, 40}, {40, 1030}, false),
            std::make_pair(Kernel::kGemmCoopmat128x128, std::vector<uint32_t>{1, 0, 1, 0, 0}));
  // Rows of 300: vec4s but no octets (8 halves = 16 bytes only every 8 elements).
  EXPECT_EQ(product_step({2, 1, 200, 264}, {3, 264, 300}, false, fixed_gemm_options(Kernel::kGemmCoopmat128x256)),
            std::make_pair(Kernel::kGemmCoopmat128x256, std::vector<uint32_t>{1, 1, 1, 0, 0}));
  // Other fragments or subgroups: gemm_coopmat.glsl's kernels (or gemm.comp where their sizes do not work out).
  EXPECT_EQ(product_step({4096, 4096}, {4096, 4096}, false, fixed_gemm_options(std::nullopt, {16, 16, 8, 32})).first,
            Kernel::kGemmCoopmat1024);
  EXPECT_EQ(product_step({4096, 4096}, {4096, 4096}, false, fixed_gemm_options(std::nullopt, {16, 16, 16, 64})).first,
            Kernel::kGemm);
  // Forced kernels (the gemm_kernel option) run whatever the work, where the device allows them.
  EXPECT_EQ(product_step({100, 30}, {30, 300}, false, fixed_gemm_options(Kernel::kGemmCoopmat128x128)),
            std::make_pair(Kernel::kGemmCoopmat128x128, std::vector<uint32_t>{0, 1, 0, 0, 0}));
  EXPECT_EQ(product_step({4096, 4096}, {4096, 4096}, false, fixed_gemm_options(Kernel::kGemmCoopmat)).first,
            Kernel::kGemmCoopmat);
  EXPECT_EQ(
      product_step({4096, 4096}, {4096, 4096}, false, fixed_gemm_options(Kernel::kGemmCoopmat128x256, {16, 16, 8, 32}))
          .first,
      Kernel::kGemmCoopmat1024);
  // A device that runs at most 256 invocations per workgroup gets 128 x 128.
  EXPECT_EQ(product_step({4096, 4096}, {4096, 4096}, false,
                         fixed_gemm_options(std::nullopt, {16, 16, 16, 32, 256, 48 * 1024}))
                .first,
            Kernel::kGemmCoopmat128x128);
  // A device with 32 KiB of shared memory fits none of them, and of gemm_coopmat.glsl's only 64 x 64.
  EXPECT_EQ(product_step({4096, 4096}, {4096, 4096}, false,
                         fixed_gemm_options(std::nullopt, {16, 16, 16, 32, 1024, 32 * 1024}))
                .first,
            Kernel::kGemmCoopmat);
  // At f32: gemm.comp.
  EXPECT_EQ(product_step({4096, 4096}, {4096, 4096}, false, {}).first, Kernel::kGemm);
}

TEST(CoopmatLoweringTest, GemmKernelOptionTakesAutoOrAGemmCoopmatKernel) {
  EXPECT_EQ(gemm_coopmat_kernel("gemm_coopmat_128x256"), Kernel::kGemmCoopmat128x256);
  EXPECT_EQ(gemm_coopmat_kernel("gemm_coopmat_1024"), Kernel::kGemmCoopmat1024);
  EXPECT_EQ(gemm_coopmat_kernel("gemm"), std::nullopt);
  EXPECT_TRUE(make_vulkan_delegate({{"gemm_kernel", "auto"}}).is_ok());
  Result<std::unique_ptr<Delegate>> d = make_vulkan_delegate({{"gemm_kernel", "conv2d"}});
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("option gemm_kernel 'conv2d' is not auto or a gemm_coopmat kernel"),
            std::string::npos)
      << d.status().message();
}

class CoopmatConvTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    context_ = make_context();
    ASSERT_NE(context_, nullptr);
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("coopmat_test:0", context_).is_ok());
  }

  Result<std::unique_ptr<Delegate>> delegate() {
    return make_vulkan_delegate({{"gpu_shared_context_token", "coopmat_test"}, {"gpu_shared_context_mode", "lookup_only"}});
  }

  bool has_tensor_cores() const {
    return context_->features().cooperative_matrix_nv && context_->features().shader_float16 &&
           pick_f16_coopmat_shape(context_->cooperative_matrix_shapes()) != nullptr;
  }

  std::shared_ptr<SharedGpuContext> context_;
};

TEST_F(CoopmatConvTest, RejectsAnUnknownPrecision) {
  Result<std::unique_ptr<Delegate>> d = make_vulkan_delegate({{"precision", "bf16"}});
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find("option precision is 'bf16' (accepted: fp32, fp16, auto)"), std::string::npos)
      << d.status().message();
}

TEST_F(CoopmatConvTest, WithoutTensorCoresFp16IsRefusedByReasonAndAutoRunsF32) {
  if (has_tensor_cores()) GTEST_SKIP() << "the device has f16 cooperative matrices";
  Result<std::unique_ptr<Delegate>> d = delegate();
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  const Graph g = conv_net();
  Result<hetsched::testing::GpuIslandDriver> fp16 =
      hetsched::testing::GpuIslandDriver::create(**d, g, {{{"precision", "fp16"}}, 0});
  ASSERT_FALSE(fp16.is_ok());
  EXPECT_EQ(fp16.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(fp16.status().message().find("precision fp16 needs tensor-core products (VK_NV_cooperative_matrix)"),
            std::string::npos)
      << fp16.status().message();
  EXPECT_NE(fp16.status().message().find("(accepted there: fp32, auto)"), std::string::npos);

  const std::vector<Tensor> inputs = {random_tensor({1, 32, 9, 11}, 7)};
  Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
  ASSERT_TRUE(want.is_ok());
  Result<hetsched::testing::GpuIslandDriver> automatic =
      hetsched::testing::GpuIslandDriver::create(**d, g, {{{"precision", "auto"}}, 0});
  ASSERT_TRUE(automatic.is_ok()) << automatic.status().message();
  Result<std::vector<Tensor>> got = automatic->run(inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_TRUE(hetsched::testing::all_close((*got)[0], (*want)[0], 1e-4f, 1e-4f));  // f16 would miss by ~1e-3
}

// The largest |a - b| over the largest |b|.
double relative_error(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_float_vector(), y = b.to_float_vector();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    diff = std::max(diff, double(std::fabs(x[i] - y[i])));
    scale = std::max(scale, double(std::fabs(y[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

TEST_F(CoopmatConvTest, Fp16ConvsMatchTheCpuKernelsWithinF16RoundingOnEveryTiling) {
  if (!has_tensor_cores()) GTEST_SKIP() << "no f16 cooperative matrices on '" << context_->device_name() << "'";
  Result<std::unique_ptr<Delegate>> d = delegate();
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  const Graph g = conv_net();
  const std::vector<Tensor> inputs = {random_tensor({1, 32, 9, 11}, 7)};
  Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
  ASSERT_TRUE(want.is_ok());
  for (const char* tiling : {"auto", "64x64/1", "128x64/1", "64x128/2", "128x128/3", "64x64/64"}) {
    SCOPED_TRACE(tiling);
    Result<hetsched::testing::GpuIslandDriver> fp16 = hetsched::testing::GpuIslandDriver::create(
        **d, g, {{{"precision", "fp16"}, {"conv_tiling", tiling}}, 0});
    ASSERT_TRUE(fp16.is_ok()) << fp16.status().message();
    Result<std::vector<Tensor>> got = fp16->run(inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    const double error = relative_error((*got)[0], (*want)[0]);
    // Operands rounded to f16 (2^-11 relative each), sums of up to 288 terms in f32.
    EXPECT_LT(error, 5e-3) << "max error relative to the output's range";
    // It must not be the f32 kernel: that matches to ~1e-6.
    EXPECT_GT(error, 1e-5) << "fp16 results equal f32's: the tensor-core kernel did not run";
  }
}

// Every output of `g` at precision fp16 within f16 operand rounding of the
// portable kernels (sums of up to a few thousand products in f32), and not
// equal to f32's results.
// `options` join precision fp16.
void expect_fp16_within_f16_rounding(Delegate& d, const Graph& g, const std::vector<Tensor>& inputs,
                                     const CompileSpecs& options = {}) {
  Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
  ASSERT_TRUE(want.is_ok());
  CompileSpecs specs = {{"precision", "fp16"}};
  specs.insert(specs.end(), options.begin(), options.end());
  Result<hetsched::testing::GpuIslandDriver> fp16 = hetsched::testing::GpuIslandDriver::create(d, g, {specs, 0});
  ASSERT_TRUE(fp16.is_ok()) << fp16.status().message();
  Result<std::vector<Tensor>> got = fp16->run(inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    SCOPED_TRACE(i);
    const double error = relative_error((*got)[i], (*want)[i]);
    EXPECT_LT(error, 5e-3) << "max error relative to the output's range";
    EXPECT_GT(error, 1e-5) << "fp16 results equal f32's: the tensor-core kernel did not run";
  }
}

TEST_F(CoopmatConvTest, Fp16MatMulsMatchTheCpuKernelsWithinF16Rounding) {
  if (!has_tensor_cores()) GTEST_SKIP() << "no f16 cooperative matrices on '" << context_->device_name() << "'";
  Result<std::unique_ptr<Delegate>> d = delegate();
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  const Graph g = matmul_net();
  const std::vector<Tensor> inputs = {random_tensor({2, 3, 150, 72}, 11), random_tensor({3, 72, 136}, 12),
                                      random_tensor({37, 21}, 13), random_tensor({45, 37}, 14)};
  expect_fp16_within_f16_rounding(**d, g, inputs);
}

// The bigger tiles: a 1030 x 40 x 1030 MatMul on gemm_coopmat_128x128 and gemm_coopmat_1024 (ragged
// edges, B's rows not 16-byte aligned) and a 197-row linear layer with a
// bias on gemm_coopmat_512 (K = 72: a partial last step).
TEST_F(CoopmatConvTest, Fp16BigTilesMatchTheCpuKernelsWithinF16Rounding) {
  if (!has_tensor_cores()) GTEST_SKIP() << "no f16 cooperative matrices on '" << context_->device_name() << "'";
  Result<std::unique_ptr<Delegate>> d = delegate();
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  GraphBuilder b("big_tiles");
  ValueId p = b.input("p", {DType::kFloat32, {1030, 40}});
  ValueId q = b.input("q", {DType::kFloat32, {40, 1030}});
  b.output(b.op("MatMul", {p, q}));
  ValueId x = b.input("x", {DType::kFloat32, {1, 197, 72}});
  ValueId y = b.op("MatMul", {x, b.constant("w", random_tensor({72, 2100}, 21))});
  b.output(b.op("Add", {y, b.constant("bias", random_tensor({2100}, 22))}));
  const Graph g = build(b);
  EXPECT_EQ(fp16_product_step({1030, 40}, {40, 1030}, false).first, Kernel::kGemmCoopmat128x128);
  EXPECT_EQ(fp16_product_step({1, 197, 72}, {72, 2100}, true).first, Kernel::kGemmCoopmat512);
  const std::vector<Tensor> inputs = {random_tensor({1030, 40}, 23), random_tensor({40, 1030}, 24),
                                      random_tensor({1, 197, 72}, 25)};
  expect_fp16_within_f16_rounding(**d, g, inputs);
  // gemm_coopmat_1024 (no longer chosen where 16x16x16 fragments exist) on the same MatMul.
  expect_fp16_within_f16_rounding(**d, g, inputs, {{"gemm_kernel", "gemm_coopmat_1024"}});
}

// gemm_coopmat_fixed.glsl's kernels, each forced by the gemm_kernel option
// onto: a batched broadcasting MatMul (K = 264: a partial last step; rows
// and columns ragged against every tile), a linear layer with a bias and a
// Relu in its epilogue (N = 300: B's rows not 16-byte aligned in f16) and
// the transposed Gemm with C of matmul_net. With storage fp16 the operands
// come from f16 buffers (the Relus before the products write them): whole
// uvec4 octets where aligned, single halves where not.
Graph fixed_gemm_net() {
  GraphBuilder b("fixed_gemm_net");
  const ValueId a = b.op("Relu", {b.input("a", {DType::kFloat32, {2, 1, 200, 264}})});
  const ValueId bb = b.op("Relu", {b.input("b", {DType::kFloat32, {3, 264, 296}})});
  b.output(b.op("MatMul", {a, bb}));  // [2, 3, 200, 296]
  const ValueId x = b.op("Relu", {b.input("x", {DType::kFloat32, {130, 72}})});
  const ValueId w = b.op("Relu", {b.input("w", {DType::kFloat32, {72, 300}})});
  b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w}), b.constant("bias", random_tensor({300}, 31))})}));
  const ValueId p = b.input("p", {DType::kFloat32, {37, 21}});
  const ValueId q = b.input("q", {DType::kFloat32, {45, 37}});
  b.output(b.op("Gemm", {p, q, b.constant("c", random_tensor({21, 45}, 32))},
                {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}}));
  return build(b);
}

TEST_F(CoopmatConvTest, Fp16FixedGemmKernelsMatchTheCpuKernelsWithinF16Rounding) {
  if (!has_tensor_cores()) GTEST_SKIP() << "no f16 cooperative matrices on '" << context_->device_name() << "'";
  Result<std::unique_ptr<Delegate>> d = delegate();
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  const Graph g = fixed_gemm_net();
  const std::vector<Tensor> inputs = {random_tensor({2, 1, 200, 264}, 33), random_tensor({3, 264, 296}, 34),
                                      random_tensor({130, 72}, 35), random_tensor({72, 300}, 36),
                                      random_tensor({37, 21}, 37), random_tensor({45, 37}, 38)};
  for (const char* kernel : {"gemm_coopmat_128x128", "gemm_coopmat_128x256"}) {
    for (const char* storage : {"fp32", "fp16"}) {
      SCOPED_TRACE(std::string(kernel) + " storage " + storage);
      expect_fp16_within_f16_rounding(**d, g, inputs, {{"gemm_kernel", kernel}, {"storage", storage}});
    }
  }
}

// The VGF delegate takes the same option and runs its convs on the same
// tensor-core kernel (NHWC).
class CoopmatVgfTest : public CoopmatConvTest {
 protected:
  Result<std::unique_ptr<Delegate>> vgf() {
    return vgf::make_vgf_delegate({{"gpu_shared_context_token", "coopmat_test"}, {"gpu_shared_context_mode", "lookup_only"}});
  }
};

TEST_F(CoopmatVgfTest, WithoutTensorCoresFp16IsRefusedByReasonAndAutoRunsF32) {
  if (has_tensor_cores()) GTEST_SKIP() << "the device has f16 cooperative matrices";
  Result<std::unique_ptr<Delegate>> d = vgf();
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  const Graph g = conv_net();
  Result<hetsched::testing::GpuIslandDriver> fp16 =
      hetsched::testing::GpuIslandDriver::create(**d, g, {{{"precision", "fp16"}}, 0});
  ASSERT_FALSE(fp16.is_ok());
  EXPECT_EQ(fp16.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(fp16.status().message().find("precision fp16 needs tensor-core products (VK_NV_cooperative_matrix)"),
            std::string::npos)
      << fp16.status().message();
  Result<hetsched::testing::GpuIslandDriver> wrong =
      hetsched::testing::GpuIslandDriver::create(**d, g, {{{"precision", "bf16"}}, 0});
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("option precision is 'bf16' (accepted: fp32, fp16, auto)"),
            std::string::npos)
      << wrong.status().message();

  const std::vector<Tensor> inputs = {random_tensor({1, 32, 9, 11}, 7)};
  Result<std::vector<Tensor>> want = hetsched::testing::run_on_cpu(g, inputs);
  ASSERT_TRUE(want.is_ok());
  Result<hetsched::testing::GpuIslandDriver> automatic =
      hetsched::testing::GpuIslandDriver::create(**d, g, {{{"precision", "auto"}}, 0});
  ASSERT_TRUE(automatic.is_ok()) << automatic.status().message();
  Result<std::vector<Tensor>> got = automatic->run(inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_TRUE(hetsched::testing::all_close((*got)[0], (*want)[0], 1e-4f, 1e-4f));  // f16 would miss by ~1e-3
}

TEST_F(CoopmatVgfTest, Fp16ConvsMatchTheCpuKernelsWithinF16Rounding) {
  if (!has_tensor_cores()) GTEST_SKIP() << "no f16 cooperative matrices on '" << context_->device_name() << "'";
  Result<std::unique_ptr<Delegate>> d = vgf();
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  expect_fp16_within_f16_rounding(**d, conv_net(), {random_tensor({1, 32, 9, 11}, 7)});
}

}  // namespace
}  // namespace hetsched::vulkan
