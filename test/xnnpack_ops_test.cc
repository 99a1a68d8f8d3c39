// XNNPACK inside the CPU delegate, op by op: every op mapped to XNNPACK
// gives what the portable kernels give (the oracle, checked against numpy in
// kernels_*_test.cc) on random inputs, and the cases left to portable say why.
//
// Tolerance: |xnnpack - portable| <= 1e-5 + 1e-4 * |portable|; convolutions
// and fully connected ops, which sum in another order with FMA, 1e-3 rel.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/xnnpack/segment_plan.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;
using testing::random_tensor;

struct Tolerance {
  float rel = 1e-4f;
  float abs = 1e-5f;
};
constexpr Tolerance kSumTolerance{1e-3f, 1e-5f};

using testing::f32;

using EngineRun = testing::CpuIslandRun;

// Compiles the whole graph as one CPU island with `engine`, runs it once.
Result<EngineRun> run_island(const Graph& graph, const std::vector<Tensor>& inputs, const std::string& engine,
                             int threads = 2) {
  return testing::run_cpu_island(graph, inputs, {{"engine", engine}, {"threads", std::to_string(threads)}});
}

void expect_close(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  ASSERT_EQ(actual.type(), expected.type());
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  int reported = 0;
  for (int64_t i = 0; i < actual.num_elements() && reported < 5; ++i) {
    if (std::abs(a[i] - e[i]) <= tol.abs + tol.rel * std::abs(e[i])) continue;
    ADD_FAILURE() << "element " << i << ": xnnpack " << a[i] << ", portable " << e[i];
    ++reported;
  }
}

// Builds the graph, runs it on both engines, compares the outputs and hands
// the graph and both runs' coverage to `check`.
template <typename Check>
void compare_engines(GraphBuilder& builder, const std::vector<Tensor>& inputs, Tolerance tol, Check check) {
  auto graph = builder.build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  auto xnn = run_island(*graph, inputs, "xnnpack");
  ASSERT_TRUE(xnn.is_ok()) << xnn.status().message();
  auto portable = run_island(*graph, inputs, "portable");
  ASSERT_TRUE(portable.is_ok()) << portable.status().message();
  check(*graph, xnn->coverage, portable->coverage);
  for (size_t i = 0; i < xnn->outputs.size(); ++i) expect_close(xnn->outputs[i], portable->outputs[i], tol);
}

// `xnnpack_ops`: how many nodes must have run on XNNPACK.
void expect_engines_agree(GraphBuilder& builder, const std::vector<Tensor>& inputs, int xnnpack_ops,
                          Tolerance tol = {}) {
  compare_engines(builder, inputs, tol, [&](const Graph& graph, const auto& xnn, const auto& portable) {
    EXPECT_EQ(xnn.xnnpack_ops, xnnpack_ops);
    EXPECT_EQ(xnn.portable_ops, static_cast<int>(graph.num_nodes()) - xnnpack_ops);
    EXPECT_EQ(portable.xnnpack_ops, 0);
  });
}

// The reason the planner gives for keeping node `node` portable ("" when it is not).
std::string portable_reason(GraphBuilder& builder, const std::string& node) {
  auto graph = builder.build();
  if (!graph.is_ok()) return "build failed: " + graph.status().message();
  const cpu::xnnpack::EnginePlan plan = cpu::xnnpack::plan_engine(*graph);
  for (const auto& r : plan.portable)
    if (graph->node(r.node).name == node) return r.reason;
  return "";
}

// --- Conv ---------------------------------------------------------------------

struct ConvCase {
  Shape x;
  Shape w;
  std::initializer_list<std::pair<std::string, Attribute>> attrs;
  bool bias = true;
};

void expect_conv_agrees(const ConvCase& c) {
  GraphBuilder b("conv");
  const ValueId x = b.input("x", f32(c.x));
  std::vector<ValueId> ins{x, b.constant("w", random_tensor(c.w, 2))};
  if (c.bias) ins.push_back(b.constant("b", random_tensor({c.w[0]}, 3)));
  b.output(b.op("Conv", ins, c.attrs));
  expect_engines_agree(b, {random_tensor(c.x, 1)}, 1, kSumTolerance);
}

TEST(XnnpackOpsTest, ConvPlainMatchesPortable) {
  expect_conv_agrees({{1, 8, 10, 10}, {16, 8, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}});
}

TEST(XnnpackOpsTest, ConvStridedMatchesPortable) {
  expect_conv_agrees({{2, 6, 11, 9}, {8, 6, 3, 3}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}});
}

TEST(XnnpackOpsTest, ConvAsymmetricPaddingMatchesPortable) {
  expect_conv_agrees({{1, 4, 9, 7}, {5, 4, 3, 2}, {{"pads", Ints{0, 1, 2, 1}}}});
}

TEST(XnnpackOpsTest, ConvSameUpperMatchesPortable) {
  expect_conv_agrees({{1, 4, 9, 8}, {6, 4, 3, 3}, {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}});
}

TEST(XnnpackOpsTest, ConvDilatedMatchesPortable) {
  expect_conv_agrees({{1, 4, 12, 12}, {6, 4, 3, 3}, {{"dilations", Ints{2, 3}}, {"pads", Ints{2, 3, 2, 3}}}});
}

TEST(XnnpackOpsTest, ConvGroupedMatchesPortable) {
  expect_conv_agrees({{1, 8, 7, 7}, {12, 2, 3, 3}, {{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}}});
}

TEST(XnnpackOpsTest, ConvDepthwiseMatchesPortable) {
  expect_conv_agrees({{1, 8, 9, 9}, {8, 1, 3, 3}, {{"group", int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}}});
}

TEST(XnnpackOpsTest, ConvDepthwiseWithMultiplierMatchesPortable) {
  expect_conv_agrees({{1, 4, 8, 8}, {8, 1, 3, 3}, {{"group", int64_t{4}}, {"strides", Ints{2, 2}}}});
}

TEST(XnnpackOpsTest, ConvPointwiseWithoutBiasMatchesPortable) {
  expect_conv_agrees({{1, 16, 6, 6}, {24, 16, 1, 1}, {}, false});
}

// A 1x1 conv with weights [[1, 2], [3, 4]] and bias [0.5, -1] on a 2-channel
// 1x2 image [[1, 2], [10, 20]]: y0 = 1*x0 + 2*x1 + 0.5, y1 = 3*x0 + 4*x1 - 1.
TEST(XnnpackOpsTest, ConvGivesHandComputedValues) {
  GraphBuilder b("conv");
  const ValueId x = b.input("x", f32({1, 2, 1, 2}));
  const ValueId w = b.constant_f32("w", {2, 2, 1, 1}, {1, 2, 3, 4});
  const ValueId bias = b.constant_f32("b", {2}, {0.5f, -1.f});
  b.output(b.op("Conv", {x, w, bias}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  auto run = run_island(*g, {Tensor::from_vector<float>(DType::kFloat32, {1, 2, 1, 2}, {1, 2, 10, 20})}, "xnnpack");
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.xnnpack_ops, 1);
  const Floats expected{21.5f, 42.5f, 42.f, 85.f};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(run->outputs[0].data<float>()[i], expected[i]) << i;
}

TEST(XnnpackOpsTest, ConvWithNonConstantWeightsStaysPortable) {
  GraphBuilder b("conv");
  const ValueId x = b.input("x", f32({1, 2, 4, 4}));
  const ValueId w = b.input("w", f32({3, 2, 3, 3}));
  b.output(b.op("Conv", {x, w}, {}, "conv"));
  EXPECT_NE(portable_reason(b, "conv").find("constant weights"), std::string::npos);
}

// Conv -> BatchNormalization -> Relu: the normalisation is folded into the
// convolution's weights, the Relu into its clamp; all three count as XNNPACK ops.
TEST(XnnpackOpsTest, ConvBatchNormReluFoldsAndMatchesPortable) {
  GraphBuilder b("conv_bn");
  const ValueId x = b.input("x", f32({1, 6, 8, 8}));
  ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({10, 6, 3, 3}, 2)), b.constant("b", random_tensor({10}, 3))},
                   {{"pads", Ints{1, 1, 1, 1}}});
  y = b.op("BatchNormalization", {y, b.constant("scale", random_tensor({10}, 4, 0.5f, 1.5f)),
                                  b.constant("shift", random_tensor({10}, 5)), b.constant("mean", random_tensor({10}, 6)),
                                  b.constant("var", random_tensor({10}, 7, 0.1f, 2.f))},
           {{"epsilon", 1e-3f}});
  b.output(b.op("Relu", {y}));
  expect_engines_agree(b, {random_tensor({1, 6, 8, 8}, 1)}, 3, kSumTolerance);
}

// The convolution's own output is an island output too, so the
// normalisation runs as XNNPACK multiply + add instead of being folded.
TEST(XnnpackOpsTest, ConvBatchNormWithSharedConvOutputMatchesPortable) {
  GraphBuilder b("conv_bn");
  const ValueId x = b.input("x", f32({1, 3, 6, 6}));
  const ValueId c = b.op("Conv", {x, b.constant("w", random_tensor({4, 3, 3, 3}, 2))});
  const ValueId y = b.op("BatchNormalization", {c, b.constant("scale", random_tensor({4}, 4)),
                                                b.constant("shift", random_tensor({4}, 5)),
                                                b.constant("mean", random_tensor({4}, 6)),
                                                b.constant("var", random_tensor({4}, 7, 0.1f, 2.f))});
  b.output(c);
  b.output(y);
  expect_engines_agree(b, {random_tensor({1, 3, 6, 6}, 1)}, 2, kSumTolerance);
}

// --- Conv with a fused activation (graph/passes/fused_activation.h) ----------

void expect_fused_conv_agrees(const FusedActivation& activation, int xnnpack_ops) {
  GraphBuilder b("conv_act");
  const ValueId x = b.input("x", f32({1, 4, 6, 6}));
  const ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({6, 4, 3, 3}, 2)), b.constant("b", random_tensor({6}, 3))},
                         {{"pads", Ints{1, 1, 1, 1}}}, "conv");
  write_fused_activation(activation, b.raw().node(b.raw().find_node("conv")).attrs);
  b.output(y);
  expect_engines_agree(b, {random_tensor({1, 4, 6, 6}, 1, -3.f, 3.f)}, xnnpack_ops, kSumTolerance);
}

TEST(XnnpackOpsTest, ConvWithFusedReluMatchesPortable) {
  expect_fused_conv_agrees({FusedActivation::Kind::kRelu}, 1);
}

TEST(XnnpackOpsTest, ConvWithFusedClipMatchesPortable) {
  FusedActivation a{FusedActivation::Kind::kClip};
  a.min = -0.5f;
  a.max = 0.75f;
  expect_fused_conv_agrees(a, 1);
}

TEST(XnnpackOpsTest, ConvWithFusedSigmoidMatchesPortable) {
  expect_fused_conv_agrees({FusedActivation::Kind::kSigmoid}, 1);
}

TEST(XnnpackOpsTest, ConvWithFusedHardSwishMatchesPortable) {
  expect_fused_conv_agrees({FusedActivation::Kind::kHardSwish}, 1);
}

TEST(XnnpackOpsTest, ConvWithFusedLeakyReluMatchesPortable) {
  FusedActivation a{FusedActivation::Kind::kLeakyRelu};
  a.alpha = 0.1f;
  expect_fused_conv_agrees(a, 1);
}

// alpha and beta fold into the filter and bias, the [0, 1] bound becomes
// the convolution's clamp; a negative alpha flips which side saturates.
TEST(XnnpackOpsTest, ConvWithFusedHardSigmoidMatchesPortable) {
  FusedActivation a{FusedActivation::Kind::kHardSigmoid};
  a.alpha = 0.2f;
  a.beta = 0.5f;
  expect_fused_conv_agrees(a, 1);
}

TEST(XnnpackOpsTest, ConvWithFusedHardSigmoidOfNegativeSlopeMatchesPortable) {
  FusedActivation a{FusedActivation::Kind::kHardSigmoid};
  a.alpha = -0.3f;
  a.beta = 0.4f;
  expect_fused_conv_agrees(a, 1);
}

// --- ConvTranspose as deconvolution ----------------------------------------

void expect_conv_transpose_agrees(const Shape& x_shape, const Shape& w_shape, bool bias,
                                  std::initializer_list<std::pair<std::string, Attribute>> attrs) {
  GraphBuilder b("deconv");
  const ValueId x = b.input("x", f32(x_shape));
  std::vector<ValueId> in = {x, b.constant("w", random_tensor(w_shape, 2))};
  if (bias) in.push_back(b.constant("b", random_tensor({w_shape[1]}, 3)));
  b.output(b.op("ConvTranspose", in, attrs));
  expect_engines_agree(b, {random_tensor(x_shape, 1)}, 1, kSumTolerance);
}

// PP-OCR's DB head: kernel 2, stride 2, no padding.
TEST(XnnpackOpsTest, ConvTransposeStride2MatchesPortable) {
  expect_conv_transpose_agrees({1, 6, 5, 7}, {6, 4, 2, 2}, true, {{"strides", Ints{2, 2}}});
}

// Kernel = stride 3 with one output channel: the 1x1 convolution and
// depth_to_space form.
TEST(XnnpackOpsTest, ConvTransposeKernelEqualToStrideToOneChannelMatchesPortable) {
  expect_conv_transpose_agrees({1, 5, 4, 3}, {5, 1, 3, 3}, true, {{"strides", Ints{3, 3}}});
}

TEST(XnnpackOpsTest, ConvTransposeWithPadsAndOutputPaddingMatchesPortable) {
  expect_conv_transpose_agrees({1, 3, 4, 5}, {3, 5, 3, 3}, false,
                               {{"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 1, 1}}, {"output_padding", Ints{1, 1}}});
}

TEST(XnnpackOpsTest, GroupedConvTransposeMatchesPortable) {
  GraphBuilder b("deconv");
  const ValueId x = b.input("x", f32({1, 4, 3, 3}));
  b.output(b.op("ConvTranspose",
                {x, b.constant("w", random_tensor({4, 3, 3, 2}, 2)), b.constant("b", random_tensor({6}, 3))},
                {{"group", int64_t{2}}, {"strides", Ints{1, 2}}, {"dilations", Ints{2, 1}}}));
  expect_engines_agree(b, {random_tensor({1, 4, 3, 3}, 1)}, 1, kSumTolerance);
}

TEST(XnnpackOpsTest, ConvTransposeWithOutputPaddingAtTheStrideStaysPortable) {
  GraphBuilder b("deconv");
  const ValueId x = b.input("x", f32({1, 2, 3, 3}));
  b.output(b.op("ConvTranspose", {x, b.constant("w", random_tensor({2, 2, 3, 3}, 2))},
                {{"strides", Ints{1, 1}}, {"dilations", Ints{2, 2}}, {"output_padding", Ints{1, 1}}}, "deconv"));
  EXPECT_NE(portable_reason(b, "deconv").find("output_padding"), std::string::npos);
}

// --- Gemm and MatMul as fully connected ----------------------------------------

TEST(XnnpackOpsTest, GemmWithoutBiasMatchesPortable) {
  GraphBuilder b("gemm");
  const ValueId a = b.input("a", f32({3, 20}));
  b.output(b.op("Gemm", {a, b.constant("b", random_tensor({20, 7}, 2))}));
  expect_engines_agree(b, {random_tensor({3, 20}, 1)}, 1, kSumTolerance);
}

TEST(XnnpackOpsTest, GemmTransposedWithBiasAlphaBetaMatchesPortable) {
  GraphBuilder b("gemm");
  const ValueId a = b.input("a", f32({4, 16}));
  b.output(b.op("Gemm", {a, b.constant("b", random_tensor({9, 16}, 2)), b.constant("c", random_tensor({1, 9}, 3))},
                {{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.f}}));
  expect_engines_agree(b, {random_tensor({4, 16}, 1)}, 1, kSumTolerance);
}

TEST(XnnpackOpsTest, GemmWithRowVaryingBiasStaysPortable) {
  GraphBuilder b("gemm");
  const ValueId a = b.input("a", f32({4, 16}));
  b.output(b.op("Gemm", {a, b.constant("b", random_tensor({16, 9}, 2)), b.constant("c", random_tensor({4, 9}, 3))}, {},
                "gemm"));
  EXPECT_NE(portable_reason(b, "gemm").find("varies along M"), std::string::npos);
}

TEST(XnnpackOpsTest, GemmWithTransposedAStaysPortable) {
  GraphBuilder b("gemm");
  const ValueId a = b.input("a", f32({16, 4}));
  b.output(b.op("Gemm", {a, b.constant("b", random_tensor({16, 9}, 2))}, {{"transA", int64_t{1}}}, "gemm"));
  EXPECT_NE(portable_reason(b, "gemm").find("transA"), std::string::npos);
}

TEST(XnnpackOpsTest, MatMul2dMatchesPortable) {
  GraphBuilder b("matmul");
  const ValueId a = b.input("a", f32({5, 12}));
  b.output(b.op("MatMul", {a, b.constant("b", random_tensor({12, 6}, 2))}));
  expect_engines_agree(b, {random_tensor({5, 12}, 1)}, 1, kSumTolerance);
}

// A rank-4 A keeps the graph's order in XNNPACK: the last dim is K.
// 15 rows: fewer than a linear layer on the fast GEMM takes (FastLinear...).
TEST(XnnpackOpsTest, MatMulBatched4dMatchesPortable) {
  GraphBuilder b("matmul");
  const ValueId a = b.input("a", f32({1, 3, 5, 8}));
  b.output(b.op("MatMul", {a, b.constant("b", random_tensor({8, 4}, 2))}));
  expect_engines_agree(b, {random_tensor({1, 3, 5, 8}, 1)}, 1, kSumTolerance);
}

TEST(XnnpackOpsTest, MatMulWithComputedBStaysPortable) {
  GraphBuilder b("matmul");
  const ValueId a = b.input("a", f32({5, 12}));
  const ValueId bb = b.input("b", f32({12, 6}));
  b.output(b.op("MatMul", {a, bb}, {}, "mm"));
  EXPECT_NE(portable_reason(b, "mm").find("B is computed at run time"), std::string::npos);
}

// --- Pools ------------------------------------------------------------------------

void expect_pool_agrees(const std::string& op, const Shape& x,
                        std::initializer_list<std::pair<std::string, Attribute>> attrs, int xnnpack_ops = 1) {
  GraphBuilder b("pool");
  b.output(b.op(op, {b.input("x", f32(x))}, attrs));
  expect_engines_agree(b, {random_tensor(x, 1)}, xnnpack_ops);
}

TEST(XnnpackOpsTest, MaxPoolPaddedStridedMatchesPortable) {
  expect_pool_agrees("MaxPool", {1, 5, 11, 11},
                     {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
}

TEST(XnnpackOpsTest, MaxPoolCeilModeMatchesPortable) {
  expect_pool_agrees("MaxPool", {1, 3, 9, 8},
                     {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
}

TEST(XnnpackOpsTest, MaxPoolDilatedUnpaddedMatchesPortable) {
  expect_pool_agrees("MaxPool", {1, 3, 10, 10}, {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}});
}

TEST(XnnpackOpsTest, MaxPoolDilatedPaddedStaysPortable) {
  GraphBuilder b("pool");
  b.output(b.op("MaxPool", {b.input("x", f32({1, 3, 10, 10}))},
                {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}, "pool"));
  EXPECT_NE(portable_reason(b, "pool").find("dilated max pooling with padding"), std::string::npos);
}

TEST(XnnpackOpsTest, AveragePoolPaddedExcludingPadMatchesPortable) {
  expect_pool_agrees("AveragePool", {1, 4, 9, 9}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
}

TEST(XnnpackOpsTest, AveragePoolUnpaddedIncludingPadMatchesPortable) {
  expect_pool_agrees("AveragePool", {1, 4, 8, 8},
                     {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"count_include_pad", int64_t{1}}});
}

TEST(XnnpackOpsTest, AveragePoolCeilModeMatchesPortable) {
  // W: floor mode gives 4 windows, ceil mode 5, the last one half in the overhang.
  expect_pool_agrees("AveragePool", {1, 2, 7, 10},
                     {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}});
}

// count_include_pad=1 with explicit pads: a constant pad of zeros, then
// the pool (op_params.h's pad_first). Inception's 3x3 stride 1 as PyTorch
// 2.x exports it; asymmetric pads with stride 2; and ceil_mode, whose last
// window reaches past the end pad, the overhang left out of the divisor.
TEST(XnnpackOpsTest, AveragePoolPaddedIncludingPadMatchesPortable) {
  expect_pool_agrees("AveragePool", {1, 5, 9, 9},
                     {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", int64_t{1}}});
  expect_pool_agrees("AveragePool", {2, 3, 10, 7},
                     {{"kernel_shape", Ints{3, 2}},
                      {"strides", Ints{2, 2}},
                      {"pads", Ints{0, 1, 2, 0}},
                      {"count_include_pad", int64_t{1}}});
  expect_pool_agrees("AveragePool", {1, 2, 8, 10},  // an overhang along both axes
                     {{"kernel_shape", Ints{3, 3}},
                      {"strides", Ints{2, 2}},
                      {"pads", Ints{1, 1, 1, 1}},
                      {"ceil_mode", int64_t{1}},
                      {"count_include_pad", int64_t{1}}});
}

TEST(XnnpackOpsTest, GlobalAveragePoolMatchesPortable) {
  expect_pool_agrees("GlobalAveragePool", {2, 6, 7, 5}, {});
}

// --- Elementwise ------------------------------------------------------------------

TEST(XnnpackOpsTest, AddOfEqualShapesMatchesPortable) {
  GraphBuilder b("add");
  b.output(b.op("Add", {b.input("a", f32({2, 3, 4, 5})), b.input("b", f32({2, 3, 4, 5}))}));
  expect_engines_agree(b, {random_tensor({2, 3, 4, 5}, 1), random_tensor({2, 3, 4, 5}, 2)}, 1);
}

// Both operands broadcast: [N,1,H,W] + [N,C,1,1].
TEST(XnnpackOpsTest, AddBroadcastingBothWaysMatchesPortable) {
  GraphBuilder b("add");
  b.output(b.op("Add", {b.input("a", f32({2, 1, 4, 5})), b.input("b", f32({2, 3, 1, 1}))}));
  expect_engines_agree(b, {random_tensor({2, 1, 4, 5}, 1), random_tensor({2, 3, 1, 1}, 2)}, 1);
}

// After a Conv the operands are NHWC: constants of every broadcast form
// ([C,1,1] per channel, [W] per column, a scalar) are re-laid to match.
TEST(XnnpackOpsTest, ConstantOperandsOfNhwcTensorsMatchPortable) {
  GraphBuilder b("bcast");
  const ValueId x = b.input("x", f32({1, 3, 5, 6}));
  ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({4, 3, 1, 1}, 2))});
  y = b.op("Add", {y, b.constant("per_channel", random_tensor({4, 1, 1}, 3))});
  y = b.op("Mul", {b.constant("per_column", random_tensor({6}, 4)), y});
  y = b.op("Sub", {y, b.constant_f32("scalar", {}, {0.25f})});
  y = b.op("Div", {y, b.constant("per_row", random_tensor({5, 1}, 5, 1.f, 2.f))});
  b.output(b.op("MaxPool", {y}, {{"kernel_shape", Ints{2, 2}}}));
  expect_engines_agree(b, {random_tensor({1, 3, 5, 6}, 1)}, 6, kSumTolerance);
}

// A run-time operand of lower rank than a rank-4 output: the op keeps the
// graph's order so numpy broadcasting lines up.
TEST(XnnpackOpsTest, AddOfRank4AndRank2ActivationsMatchesPortable) {
  GraphBuilder b("add");
  b.output(b.op("Add", {b.input("a", f32({2, 3, 4, 5})), b.input("b", f32({4, 5}))}));
  expect_engines_agree(b, {random_tensor({2, 3, 4, 5}, 1), random_tensor({4, 5}, 2)}, 1);
}

TEST(XnnpackOpsTest, SubAndDivMatchPortable) {
  GraphBuilder b("subdiv");
  const ValueId a = b.input("a", f32({3, 7}));
  const ValueId c = b.input("c", f32({3, 7}));
  b.output(b.op("Div", {b.op("Sub", {a, c}), c}));
  expect_engines_agree(b, {random_tensor({3, 7}, 1), random_tensor({3, 7}, 2, 0.5f, 2.f)}, 2);
}

TEST(XnnpackOpsTest, IntegerAddStaysPortable) {
  GraphBuilder b("add");
  const ValueId a = b.input("a", TensorType{DType::kInt64, {4}});
  b.output(b.op("Add", {a, a}, {}, "add"));
  EXPECT_NE(portable_reason(b, "add").find("f32 only"), std::string::npos);
}

void expect_unary_agrees(const std::string& op, float lo, float hi,
                         std::initializer_list<std::pair<std::string, Attribute>> attrs = {}) {
  GraphBuilder b("unary");
  b.output(b.op(op, {b.input("x", f32({2, 3, 4, 5}))}, attrs));
  expect_engines_agree(b, {random_tensor({2, 3, 4, 5}, 1, lo, hi)}, 1);
}

TEST(XnnpackOpsTest, ReluMatchesPortable) { expect_unary_agrees("Relu", -2.f, 2.f); }
TEST(XnnpackOpsTest, SigmoidMatchesPortable) { expect_unary_agrees("Sigmoid", -8.f, 8.f); }
TEST(XnnpackOpsTest, HardSwishMatchesPortable) { expect_unary_agrees("HardSwish", -5.f, 5.f); }
TEST(XnnpackOpsTest, HardSigmoidMatchesPortable) {
  expect_unary_agrees("HardSigmoid", -5.f, 5.f, {{"alpha", 0.25f}, {"beta", 0.4f}});
}
TEST(XnnpackOpsTest, HardSigmoidWithDefaultsMatchesPortable) { expect_unary_agrees("HardSigmoid", -4.f, 4.f); }
TEST(XnnpackOpsTest, AbsMatchesPortable) { expect_unary_agrees("Abs", -2.f, 2.f); }
TEST(XnnpackOpsTest, NegMatchesPortable) { expect_unary_agrees("Neg", -2.f, 2.f); }
TEST(XnnpackOpsTest, SqrtMatchesPortable) { expect_unary_agrees("Sqrt", 0.f, 4.f); }

TEST(XnnpackOpsTest, ClipWithBothBoundsMatchesPortable) {
  GraphBuilder b("clip");
  const ValueId x = b.input("x", f32({4, 9}));
  b.output(b.op("Clip", {x, b.constant_f32("lo", {}, {-0.3f}), b.constant_f32("hi", {}, {0.6f})}));
  expect_engines_agree(b, {random_tensor({4, 9}, 1)}, 1);
}

TEST(XnnpackOpsTest, ClipWithMinOnlyMatchesPortable) {
  GraphBuilder b("clip");
  const ValueId x = b.input("x", f32({4, 9}));
  b.output(b.op("Clip", {x, b.constant_f32("lo", {}, {0.1f})}));
  expect_engines_agree(b, {random_tensor({4, 9}, 1)}, 1);
}

TEST(XnnpackOpsTest, ClipWithEqualBoundsStaysPortable) {
  GraphBuilder b("clip");
  const ValueId x = b.input("x", f32({4, 9}));
  b.output(b.op("Clip", {x, b.constant_f32("lo", {}, {0.5f}), b.constant_f32("hi", {}, {0.5f})}, {}, "clip"));
  EXPECT_NE(portable_reason(b, "clip").find("needs min < max"), std::string::npos);
}

// The ops of graph/ops_extra.cc that XNNPACK has too.
TEST(XnnpackOpsTest, FloorMatchesPortable) { expect_unary_agrees("Floor", -3.f, 3.f); }
TEST(XnnpackOpsTest, CeilMatchesPortable) { expect_unary_agrees("Ceil", -3.f, 3.f); }
TEST(XnnpackOpsTest, LeakyReluMatchesPortable) { expect_unary_agrees("LeakyRelu", -2.f, 2.f, {{"alpha", 0.2f}}); }

// Halves round to even in both: -2.5 -> -2, -1.5 -> -2, 0.5 -> 0, 2.5 -> 2.
TEST(XnnpackOpsTest, RoundHalvesToEvenLikePortable) {
  GraphBuilder b("round");
  b.output(b.op("Round", {b.input("x", f32({2, 12}))}));
  Tensor x(f32({2, 12}));
  for (int i = 0; i < 24; ++i) x.data<float>()[i] = -6.f + 0.5f * static_cast<float>(i);
  expect_engines_agree(b, {x}, 1);
}

TEST(XnnpackOpsTest, MaxMinAndSumOfTwoMatchPortable) {
  GraphBuilder b("maxmin");
  const ValueId a = b.input("a", f32({2, 3, 4, 5}));
  const ValueId c = b.input("c", f32({2, 3, 1, 5}));
  const ValueId m = b.op("Max", {a, c});
  b.output(b.op("Sum", {b.op("Min", {m, b.constant("k", random_tensor({5}, 3))}), a}));
  expect_engines_agree(b, {random_tensor({2, 3, 4, 5}, 1), random_tensor({2, 3, 1, 5}, 2)}, 3);
}

TEST(XnnpackOpsTest, SumOfThreeStaysPortable) {
  GraphBuilder b("sum");
  const ValueId a = b.input("a", f32({3, 4}));
  b.output(b.op("Sum", {a, a, a}, {}, "sum"));
  EXPECT_NE(portable_reason(b, "sum").find("take two"), std::string::npos);
}

// Pad between two convolutions runs on NHWC data: the pads move with C.
TEST(XnnpackOpsTest, PadBetweenConvsMatchesPortable) {
  GraphBuilder b("pad");
  const ValueId x = b.input("x", f32({1, 3, 6, 5}));
  ValueId y = b.op("Conv", {x, b.constant("w1", random_tensor({4, 3, 1, 1}, 2))});
  y = b.op("Pad", {y, b.constant_i64("pads", {8}, {0, 1, 2, 0, 0, 2, 1, 3}), b.constant_f32("value", {}, {0.5f})});
  b.output(b.op("Conv", {y, b.constant("w2", random_tensor({2, 7, 3, 3}, 3))}));
  expect_engines_agree(b, {random_tensor({1, 3, 6, 5}, 1)}, 3, kSumTolerance);
}

TEST(XnnpackOpsTest, ReflectPadStaysPortable) {
  GraphBuilder b("pad");
  const ValueId x = b.input("x", f32({1, 3, 6, 5}));
  b.output(b.op("Pad", {x, b.constant_i64("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1})}, {{"mode", std::string("reflect")}},
                "pad"));
  EXPECT_NE(portable_reason(b, "pad").find("constant only"), std::string::npos);
}

TEST(XnnpackOpsTest, PReluPerChannelMatchesPortable) {
  GraphBuilder b("prelu");
  const ValueId x = b.input("x", f32({2, 5, 4, 3}));
  b.output(b.op("PRelu", {x, b.constant("slope", random_tensor({5, 1, 1}, 2))}));
  expect_engines_agree(b, {random_tensor({2, 5, 4, 3}, 1)}, 1);
}

// --- Softmax ----------------------------------------------------------------------

// Softmax inside a segment runs on XNNPACK; alone, on its fast kernel (see
// FastSoftmaxMatchesPortable).
TEST(XnnpackOpsTest, SoftmaxLastAxisMatchesPortable) {
  GraphBuilder b("softmax");
  const ValueId x = b.input("x", f32({6, 10}));
  b.output(b.op("Softmax", {b.op("Mul", {x, x})}));
  expect_engines_agree(b, {random_tensor({6, 10}, 1, -2.f, 2.f)}, 2);
}

TEST(XnnpackOpsTest, SoftmaxLastAxisOfRank4MatchesPortable) {
  GraphBuilder b("softmax");
  const ValueId x = b.input("x", f32({2, 3, 4, 7}));
  b.output(b.op("Softmax", {b.op("Mul", {x, x})}, {{"axis", int64_t{3}}}));
  expect_engines_agree(b, {random_tensor({2, 3, 4, 7}, 1, -2.f, 2.f)}, 2);
}

TEST(XnnpackOpsTest, SoftmaxOverChannelsStaysPortable) {
  GraphBuilder b("softmax");
  b.output(b.op("Softmax", {b.input("x", f32({2, 3, 4, 7}))}, {{"axis", int64_t{1}}}, "softmax"));
  EXPECT_NE(portable_reason(b, "softmax").find("last axis only"), std::string::npos);
}

// --- Resize -----------------------------------------------------------------------

// A Relu after the Resize keeps it in XNNPACK: alone in its segment, the
// fast kernel would take it (resize_fast_test.cc).
void expect_resize_agrees(const std::string& transform, const Shape& x, const Shape& sizes) {
  GraphBuilder b("resize");
  const ValueId in = b.input("x", f32(x));
  const ValueId none = b.constant("none", Tensor(f32({0})));
  b.output(b.op("Relu", {b.op("Resize", {in, none, none, b.constant_i64("sizes", {4}, Ints(sizes.begin(), sizes.end()))},
                              {{"mode", std::string("linear")}, {"coordinate_transformation_mode", transform}})}));
  expect_engines_agree(b, {random_tensor(x, 1)}, 2);
}

TEST(XnnpackOpsTest, ResizeHalfPixelUpsampleMatchesPortable) {
  expect_resize_agrees("half_pixel", {1, 3, 5, 4}, {1, 3, 10, 8});
}

TEST(XnnpackOpsTest, ResizeHalfPixelDownsampleMatchesPortable) {
  expect_resize_agrees("half_pixel", {1, 3, 12, 9}, {1, 3, 5, 4});
}

TEST(XnnpackOpsTest, ResizePytorchHalfPixelMatchesPortable) {
  expect_resize_agrees("pytorch_half_pixel", {1, 2, 6, 6}, {1, 2, 9, 13});
}

TEST(XnnpackOpsTest, ResizeAlignCornersMatchesPortable) {
  expect_resize_agrees("align_corners", {1, 2, 5, 7}, {1, 2, 9, 11});
}

TEST(XnnpackOpsTest, ResizeAsymmetricMatchesPortable) {
  expect_resize_agrees("asymmetric", {1, 2, 5, 7}, {1, 2, 10, 14});
}

TEST(XnnpackOpsTest, ResizeByExactScalesMatchesPortable) {
  GraphBuilder b("resize");
  const ValueId x = b.input("x", f32({1, 3, 4, 6}));
  const ValueId none = b.constant("none", Tensor(f32({0})));
  b.output(b.op("Relu", {b.op("Resize", {x, none, b.constant_f32("scales", {4}, {1.f, 1.f, 2.f, 1.5f})},
                              {{"mode", std::string("linear")}})}));
  expect_engines_agree(b, {random_tensor({1, 3, 4, 6}, 1)}, 2);
}

TEST(XnnpackOpsTest, ResizeByInexactScaleStaysPortable) {
  GraphBuilder b("resize");
  const ValueId x = b.input("x", f32({1, 3, 4, 6}));
  const ValueId none = b.constant("none", Tensor(f32({0})));
  b.output(b.op("Resize", {x, none, b.constant_f32("scales", {4}, {1.f, 1.f, 1.7f, 1.7f})},
                {{"mode", std::string("linear")}}, "resize"));
  EXPECT_NE(portable_reason(b, "resize").find("is not output/input size"), std::string::npos);
}

TEST(XnnpackOpsTest, ResizeNearestStaysPortable) {
  GraphBuilder b("resize");
  const ValueId x = b.input("x", f32({1, 3, 4, 6}));
  const ValueId none = b.constant("none", Tensor(f32({0})));
  b.output(b.op("Resize", {x, none, b.constant_f32("scales", {4}, {1.f, 1.f, 2.f, 2.f})}, {}, "resize"));
  EXPECT_NE(portable_reason(b, "resize").find("bilinearly only"), std::string::npos);
}

// --- BatchNormalization, re-labelling, Concat ------------------------------------

TEST(XnnpackOpsTest, StandaloneBatchNormMatchesPortable) {
  for (const Shape& shape : {Shape{2, 5, 3, 4}, Shape{6, 5}}) {
    GraphBuilder b("bn");
    const ValueId x = b.input("x", f32(shape));
    b.output(b.op("BatchNormalization",
                  {x, b.constant("scale", random_tensor({5}, 4)), b.constant("shift", random_tensor({5}, 5)),
                   b.constant("mean", random_tensor({5}, 6)), b.constant("var", random_tensor({5}, 7, 0.1f, 2.f))}));
    expect_engines_agree(b, {random_tensor(shape, 1)}, 1);
  }
}

// The classifier tail: GlobalAveragePool (NHWC) -> Flatten -> Gemm in one
// segment; a 1x1 NHWC map is already in the graph's order.
TEST(XnnpackOpsTest, PoolFlattenGemmTailMatchesPortable) {
  GraphBuilder b("tail");
  const ValueId x = b.input("x", f32({2, 8, 5, 5}));
  ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({16, 8, 3, 3}, 2))});
  y = b.op("GlobalAveragePool", {y});
  y = b.op("Flatten", {y});
  b.output(b.op("Gemm", {y, b.constant("fc", random_tensor({10, 16}, 3)), b.constant("fc_b", random_tensor({10}, 4))},
                {{"transB", int64_t{1}}}));
  expect_engines_agree(b, {random_tensor({2, 8, 5, 5}, 1)}, 4, kSumTolerance);
}

// MnasNet's and ShuffleNet's pooling: Conv -> ReduceMean over H and W
// (keepdims 0, then 1; axes spelled 2,3 and -1,-2) -> Gemm, one segment.
TEST(XnnpackOpsTest, SpatialReduceMeanGemmTailMatchesPortable) {
  for (const bool keepdims : {false, true}) {
    SCOPED_TRACE(keepdims ? "keepdims 1" : "keepdims 0");
    GraphBuilder b("tail");
    const ValueId x = b.input("x", f32({2, 8, 5, 5}));
    ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({16, 8, 3, 3}, 2))});
    y = b.op("ReduceMean", {y},
             {{"axes", keepdims ? Ints{-1, -2} : Ints{2, 3}}, {"keepdims", int64_t{keepdims ? 1 : 0}}});
    if (keepdims) y = b.op("Flatten", {y});
    b.output(b.op("Gemm",
                  {y, b.constant("fc", random_tensor({10, 16}, 3)), b.constant("fc_b", random_tensor({10}, 4))},
                  {{"transB", int64_t{1}}}));
    expect_engines_agree(b, {random_tensor({2, 8, 5, 5}, 1)}, keepdims ? 4 : 3, kSumTolerance);
  }
}

TEST(XnnpackOpsTest, ReduceMeanOverChannelsStaysPortable) {
  GraphBuilder b("mean");
  b.output(b.op("ReduceMean", {b.input("x", f32({1, 4, 3, 3}))}, {{"axes", Ints{1}}}, "mean"));
  EXPECT_NE(portable_reason(b, "mean").find("over H and W"), std::string::npos);
}

TEST(XnnpackOpsTest, ConcatStaysPortable) {
  GraphBuilder b("concat");
  const ValueId a = b.input("a", f32({1, 2, 3, 3}));
  b.output(b.op("Concat", {a, a}, {{"axis", int64_t{1}}}, "concat"));
  EXPECT_NE(portable_reason(b, "concat").find("no XNNPACK mapping"), std::string::npos);
}

// --- Fast kernels (delegates/cpu/fast/): what XNNPACK lacks, vectorised --------

// `fast_ops` nodes of the xnnpack engine's island (after its GELU fusion)
// must run on fast kernels.
void expect_fast_agrees(GraphBuilder& builder, const std::vector<Tensor>& inputs, int fast_ops,
                        Tolerance tol = kSumTolerance) {
  compare_engines(builder, inputs, tol, [&](const Graph&, const auto& xnn, const auto& portable) {
    EXPECT_EQ(xnn.fast_ops, fast_ops);
    EXPECT_EQ(portable.fast_ops, 0);
  });
}

TEST(XnnpackOpsTest, FastBatchMatMulMatchesPortable) {
  // Row and column counts off the micro-kernel's 6 x 16 tile.
  for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{{{2, 3, 17, 20}, {2, 3, 20, 35}},
                                                                    {{4, 1, 9, 8}, {3, 8, 5}},
                                                                    {{64, 32}, {32, 64}},
                                                                    {{1, 4, 64, 64}, {1, 4, 64, 32}}}) {
    GraphBuilder b("bmm");
    const ValueId x = b.input("a", f32(sa));
    const ValueId y = b.input("b", f32(sb));
    b.output(b.op("MatMul", {x, y}));
    expect_fast_agrees(b, {random_tensor(sa, 1), random_tensor(sb, 2)},
                       std::string(cpu::fast::gemm_isa()) == "plain" ? 0 : 1);
  }
}

// A linear layer (MatMul, bias Add, residual Add) of a token sequence runs
// as one op on the fast GEMM where the CPU has AVX2 or AVX-512, on XNNPACK
// elsewhere (HETSCHED_FAST_ISA=baseline: xnnpack_ops_test_fast_baseline).
TEST(XnnpackOpsTest, FastLinearLayerMatchesPortable) {
  const bool fast_gemm = std::string(cpu::fast::gemm_isa()) != "plain";
  for (const auto& [rows, n] : std::vector<std::pair<int64_t, int64_t>>{{64, 128}, {17, 40}, {23, 45}, {100, 512}}) {
    GraphBuilder b("linear");
    const Shape shape{1, rows, 48};
    const ValueId x = b.input("x", f32(shape));
    const ValueId r = b.input("r", f32({1, rows, n}));
    const ValueId y = b.op("Add", {b.op("MatMul", {x, b.constant("w", random_tensor({48, n}, 2))}),
                                    b.constant("bias", random_tensor({n}, 3))});
    b.output(b.op("Add", {r, y}));
    expect_fast_agrees(b, {random_tensor(shape, 1), random_tensor({1, rows, n}, 4)}, fast_gemm ? 3 : 0);
  }
}

TEST(XnnpackOpsTest, FastLayerNormMatchesPortable) {
  // A small one, and BERT-base's [128, 768] rows, which split over the
  // threads (run_island: 2).
  for (const Shape& shape : std::vector<Shape>{{2, 5, 6, 24}, {1, 64, 2, 768}}) {
    for (int64_t axis : {int64_t{-1}, int64_t{-2}}) {
      for (bool bias : {true, false}) {
        GraphBuilder b("ln");
        const Shape row(shape.end() + axis, shape.end());
        const ValueId x = b.input("x", f32(shape));
        std::vector<ValueId> ins{x, b.constant("scale", random_tensor(row, 2))};
        if (bias) ins.push_back(b.constant("bias", random_tensor(row, 3)));
        b.output(b.op("LayerNormalization", ins, {{"axis", axis}, {"epsilon", 1e-5f}}));
        expect_fast_agrees(b, {random_tensor(shape, 1, -3.f, 5.f)}, 1, Tolerance{});
      }
    }
  }
}

TEST(XnnpackOpsTest, FastGeluAndErfMatchPortable) {
  for (const char* op : {"Gelu", "Erf"}) {
    GraphBuilder b("unary");
    const Shape shape{3, 1000, 7};
    const ValueId x = b.input("x", f32(shape));
    b.output(b.op(op, {x}));
    expect_fast_agrees(b, {random_tensor(shape, 1, -6.f, 6.f)}, 1, Tolerance{});
  }
  // Gelu's tanh form (opset 20's approximate "tanh") on its own fast pass.
  GraphBuilder b("gelu_tanh");
  const Shape shape{3, 1000, 7};
  b.output(b.op("Gelu", {b.input("x", f32(shape))}, {{"approximate", std::string("tanh")}}));
  expect_fast_agrees(b, {random_tensor(shape, 1, -6.f, 6.f)}, 1, Tolerance{});
}

Tensor scalar(float v) { return Tensor::from_vector<float>(DType::kFloat32, {}, {v}); }

TEST(XnnpackOpsTest, FastWhereMatchesPortable) {
  // A causal mask over attention scores (cond and Y broadcast), and every
  // operand full-size.
  for (const auto& [sc, sx, sy] : std::vector<std::tuple<Shape, Shape, Shape>>{
           {{1, 1, 16, 16}, {1, 4, 16, 16}, {}}, {{3, 9}, {3, 9}, {3, 9}}, {{5, 1}, {1, 7}, {5, 7}}}) {
    GraphBuilder b("where");
    Tensor cond(TensorType{DType::kBool, sc});
    for (int64_t i = 0; i < cond.num_elements(); ++i) cond.data<uint8_t>()[i] = (i * 7 % 3) == 0;
    const ValueId x = b.input("x", f32(sx));
    b.output(b.op("Where", {b.constant("cond", cond), x, b.constant("y", random_tensor(sy, 3))}));
    expect_fast_agrees(b, {random_tensor(sx, 1)}, 1, Tolerance{});
  }
}

TEST(XnnpackOpsTest, FastTransposeMatchesPortable) {
  // PyTorch's head shuffles (a copy, copies of rows), a real transpose of
  // the last two axes, the default reversal, and a permutation of rank 5.
  for (const auto& [shape, perm] : std::vector<std::pair<Shape, Ints>>{{{64, 1, 32}, {1, 0, 2}},
                                                                      {{1, 6, 1, 3, 8}, {3, 1, 2, 0, 4}},
                                                                      {{1, 4, 6, 5}, {0, 1, 3, 2}},
                                                                      {{3, 5, 7}, {}},
                                                                      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}}}) {
    GraphBuilder b("transpose");
    const ValueId x = b.input("x", f32(shape));
    if (perm.empty())
      b.output(b.op("Transpose", {x}));
    else
      b.output(b.op("Transpose", {x}, {{"perm", perm}}));
    expect_fast_agrees(b, {random_tensor(shape, 1)}, 1, Tolerance{});
  }
}

TEST(XnnpackOpsTest, FastSoftmaxMatchesPortable) {
  // Rows of 7 (shorter than a vector), 64 and 100; before opset 13 the
  // rows span every axis from `axis` on.
  for (const Shape& shape : std::vector<Shape>{{2, 3, 4, 7}, {1, 4, 64, 64}, {3, 100}}) {
    GraphBuilder b("softmax");
    b.output(b.op("Softmax", {b.input("x", f32(shape))}));
    expect_fast_agrees(b, {random_tensor(shape, 1, -30.f, 30.f)}, 1, Tolerance{});
  }
}

// A causal mask's rows: -inf, -1e9 and -FLT_MAX beside finite scores give
// exactly 0 there and rows summing to 1 (exp's clamp; a denormal there
// was exact enough but cost a microcode assist per element).
TEST(XnnpackOpsTest, FastSoftmaxOfMaskedRowsGivesExactZeros) {
  const Shape shape{5, 37};
  Tensor x = random_tensor(shape, 2, -4.f, 4.f);
  float* v = x.data<float>();
  const float masks[] = {-std::numeric_limits<float>::infinity(), -1e9f, std::numeric_limits<float>::lowest()};
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = r + 1; c < 37; ++c) v[r * 37 + c] = masks[(r + c) % 3];
  GraphBuilder b("softmax_masked");
  b.output(b.op("Softmax", {b.input("x", f32(shape))}));
  const Graph g = testing::build(b);
  GraphBuilder again("softmax_masked");
  again.output(again.op("Softmax", {again.input("x", f32(shape))}));
  expect_fast_agrees(again, {x}, 1, Tolerance{});
  auto run = testing::run_cpu_island(g, {x}, {{"engine", "xnnpack"}, {"threads", "1"}});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  const float* y = run->outputs[0].data<float>();
  for (int64_t r = 0; r < 5; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < 37; ++c) {
      if (c > r) {
        EXPECT_EQ(y[r * 37 + c], 0.f) << "row " << r << ", column " << c;
      }
      sum += y[r * 37 + c];
    }
    EXPECT_NEAR(sum, 1.0, 1e-6) << "row " << r;
  }
}

// Both written-out forms of the erf GELU become one Gelu on a fast kernel.
TEST(XnnpackOpsTest, WrittenOutGeluFusesToFastGelu) {
  for (int form : {0, 1, 2}) {
    GraphBuilder b("gelu");
    const Shape shape{4, 33};
    const ValueId x = b.input("x", f32(shape));
    const ValueId scaled = b.op("Div", {x, b.constant("sqrt2", scalar(1.4142135f))});
    const ValueId gate = b.op("Add", {b.op("Erf", {scaled}), b.constant("one", scalar(1.f))});
    const ValueId half = b.constant("half", scalar(0.5f));
    if (form == 0) b.output(b.op("Mul", {b.op("Mul", {x, half}), gate}));
    if (form == 1) b.output(b.op("Mul", {b.op("Mul", {x, gate}), half}));
    if (form == 2) b.output(b.op("Mul", {x, b.op("Mul", {half, gate})}));
    expect_fast_agrees(b, {random_tensor(shape, 1, -6.f, 6.f)}, 1, Tolerance{});
  }
}

}  // namespace
}  // namespace hetsched
