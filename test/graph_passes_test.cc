// The import-time clean-up passes (graph/passes/): each one must leave the
// graph computing the same outputs. Every test runs the graph with the
// portable CPU kernels on random inputs before and after the pass and
// compares, and checks what the pass changed in the structure.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_reference.h"
#include "graph/builder.h"
#include "graph/passes/concat_of_slices.h"
#include "graph/passes/constant_folding.h"
#include "graph/passes/dead_nodes.h"
#include "graph/passes/fold_batch_norm.h"
#include "graph/passes/fold_conv_affine.h"
#include "graph/passes/crop_conv_taps.h"
#include "graph/passes/fold_input_affine.h"
#include "graph/passes/fuse_channel_shuffle.h"
#include "graph/passes/fuse_conv_activation.h"
#include "graph/passes/fuse_gelu.h"
#include "graph/passes/fuse_hard_swish.h"
#include "graph/passes/fused_activation.h"
#include "graph/passes/remove_identity.h"
#include "scheduler/graph_cleanup.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;
using testing::random_tensor;

// Random inputs of the graph's input types, reproducible from `seed`.
std::vector<Tensor> random_inputs(const Graph& g, uint32_t seed) {
  std::vector<Tensor> inputs;
  for (ValueId in : g.inputs()) inputs.push_back(random_tensor(g.value(in).type.shape, seed++, -2.f, 2.f));
  return inputs;
}

void expect_close(const std::vector<Tensor>& a, const std::vector<Tensor>& b, float tol = 1e-4f) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].type(), b[k].type()) << "output " << k;
    const std::vector<float> x = a[k].to_float_vector(), y = b[k].to_float_vector();
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(x[i], y[i], tol + tol * std::abs(x[i])) << "output " << k << " element " << i;
  }
}

// Runs `pass` on a copy of `graph`, re-checks it, and expects the same
// outputs on random inputs. Returns the graph after the pass.
template <typename Pass>
Graph expect_same_results(const Graph& graph, Pass pass, int expected_changes) {
  Graph after = graph;
  Result<int> changes = pass(after);
  EXPECT_TRUE(changes.is_ok()) << changes.status().message();
  if (changes.is_ok()) {
    EXPECT_EQ(*changes, expected_changes);
  }
  Status checked = check_graph(after);
  EXPECT_TRUE(checked.is_ok()) << checked.message();
  for (uint32_t seed : {1u, 17u}) {
    auto inputs = random_inputs(graph, seed);
    auto before_out = cpu::run_graph_reference(graph, inputs);
    auto after_out = cpu::run_graph_reference(after, inputs);
    EXPECT_TRUE(before_out.is_ok()) << before_out.status().message();
    EXPECT_TRUE(after_out.is_ok()) << after_out.status().message();
    if (before_out.is_ok() && after_out.is_ok()) expect_close(*before_out, *after_out);
  }
  return after;
}

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

std::vector<std::string> output_names(const Graph& g) {
  std::vector<std::string> names;
  for (ValueId v : g.outputs()) names.push_back(g.value(v).name);
  return names;
}

// x [1,3,6,6] → Conv (4 out channels, 3x3, pad 1, optional bias).
ValueId add_conv(GraphBuilder& b, ValueId x, bool bias, const std::string& name = "conv") {
  std::vector<ValueId> in = {x, b.constant(name + "_w", random_tensor({4, 3, 3, 3}, 7, -0.5f, 0.5f))};
  if (bias) in.push_back(b.constant(name + "_b", random_tensor({4}, 8)));
  return b.op("Conv", in, {{"pads", Ints{1, 1, 1, 1}}}, name);
}

ValueId add_batch_norm(GraphBuilder& b, ValueId x, const std::string& name = "bn") {
  return b.op("BatchNormalization",
              {x, b.constant(name + "_scale", random_tensor({4}, 11, 0.5f, 1.5f)),
               b.constant(name + "_bias", random_tensor({4}, 12)), b.constant(name + "_mean", random_tensor({4}, 13)),
               b.constant(name + "_var", random_tensor({4}, 14, 0.1f, 2.f))},
              {{"epsilon", 1e-3f}}, name);
}

// --- fold_batch_norm_into_conv ---------------------------------------------------------

TEST(GraphPassesTest, BatchNormFoldsIntoConvWithBias) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  b.output(add_batch_norm(b, add_conv(b, x, true)));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_batch_norm_into_conv, 1);
  EXPECT_EQ(count_op(after, "BatchNormalization"), 0);
  EXPECT_EQ(count_op(after, "Conv"), 1);
  EXPECT_EQ(output_names(after), std::vector<std::string>{"bn_out"});
}

TEST(GraphPassesTest, BatchNormFoldsIntoConvWithoutBias) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  b.output(add_batch_norm(b, add_conv(b, x, false)));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_batch_norm_into_conv, 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).inputs.size(), 3u);  // the folded bias is new
}

TEST(GraphPassesTest, BatchNormStaysWhenTheConvOutputHasAnotherReader) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  const ValueId c = add_conv(b, x, true);
  b.output(add_batch_norm(b, c));
  b.output(b.op("Relu", {c}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_batch_norm_into_conv, 0);
  EXPECT_EQ(count_op(after, "BatchNormalization"), 1);
}

// --- fold_conv_affine ----------------------------------------------------------------------

TEST(GraphPassesTest, ConvAffineFoldsPerChannelMulThenScalarAdd) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  ValueId y = b.op("Mul", {add_conv(b, x, true), b.constant("s", random_tensor({1, 4, 1, 1}, 21, -2.f, 2.f))});
  y = b.op("Add", {y, b.constant_f32("t", {}, {0.75f})}, {}, "shift");
  b.output(y);
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_conv_affine, 2);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).op, "Conv");
  EXPECT_EQ(output_names(after), std::vector<std::string>{"shift_out"});
}

TEST(GraphPassesTest, ConvAffineFoldsSubAndDivIntoAConvWithoutBias) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  ValueId y = b.op("Sub", {add_conv(b, x, false), b.constant("t", random_tensor({4, 1, 1}, 22))});
  y = b.op("Div", {y, b.constant_f32("d", {1}, {-2.5f})});
  b.output(y);
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_conv_affine, 2);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).inputs.size(), 3u);  // the folded bias is new
}

TEST(GraphPassesTest, ConvAffineFoldsAConstantOnTheLeftOfMul) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  b.output(b.op("Mul", {b.constant_f32("s", {}, {3.f}), add_conv(b, x, true)}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_conv_affine, 1);
  EXPECT_EQ(after.num_nodes(), 1u);
}

TEST(GraphPassesTest, ConvAffineFoldsAddAndBatchNormIntoAConvTranspose) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 5, 5}});
  ValueId y = b.op("ConvTranspose", {x, b.constant("tw", random_tensor({3, 4, 2, 2}, 41, -0.5f, 0.5f))},
                   {{"strides", Ints{2, 2}}}, "deconv");
  y = b.op("Add", {y, b.constant("t", random_tensor({1, 4, 1, 1}, 42))});
  b.output(add_batch_norm(b, y));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_conv_affine, 2);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).op, "ConvTranspose");
  EXPECT_EQ(output_names(after), std::vector<std::string>{"bn_out"});
}

TEST(GraphPassesTest, ConvAffineScalesEachOutputChannelOfAGroupedConvTranspose) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 3, 3}});
  ValueId y = b.op("ConvTranspose",
                   {x, b.constant("tw", random_tensor({4, 3, 3, 3}, 43, -0.5f, 0.5f)),
                    b.constant("tb", random_tensor({6}, 44))},
                   {{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}});
  b.output(b.op("Mul", {y, b.constant_f32("s", {6, 1, 1}, {1.f, -2.f, 0.5f, 3.f, 0.25f, -1.f})}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_conv_affine, 1);
  EXPECT_EQ(after.num_nodes(), 1u);
}

TEST(GraphPassesTest, ConvAffineLeavesWhatIsNotAPerChannelStep) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  // constant minus the Conv output: not x * s + t of the Conv output
  b.output(b.op("Sub", {b.constant_f32("c", {}, {1.f}), add_conv(b, x, true, "conv_a")}));
  // a per-pixel constant
  b.output(b.op("Mul", {add_conv(b, x, true, "conv_b"), b.constant("p", random_tensor({1, 1, 6, 6}, 23))}));
  // the Conv already carries an activation
  const ValueId relu = b.op("Relu", {add_conv(b, x, true, "conv_c")});
  b.output(b.op("Add", {relu, b.constant_f32("t", {}, {1.f})}));
  // the Conv output has a second reader
  const ValueId shared = add_conv(b, x, true, "conv_d");
  b.output(b.op("Mul", {shared, b.constant_f32("s", {}, {2.f})}));
  b.output(shared);
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  ASSERT_TRUE(fuse_conv_activation(*g).is_ok());
  Graph after = expect_same_results(*g, fold_conv_affine, 0);
  EXPECT_EQ(after.num_nodes(), g->num_nodes());
}

// --- crop_conv_taps ---------------------------------------------------------------------------

// x [1,4,H,W] -> a 3x3 Conv dilated `d` with pads `p` (and stride `s`).
Graph dilated_conv(int64_t h, int64_t w, int64_t d, const Ints& p, int64_t s = 1) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, h, w}});
  b.output(b.op("Conv",
                {x, b.constant("w", random_tensor({5, 4, 3, 3}, 41, -0.5f, 0.5f)),
                 b.constant("b", random_tensor({5}, 42))},
                {{"kernel_shape", Ints{3, 3}}, {"pads", p}, {"dilations", Ints{d, d}}, {"strides", Ints{s, s}}},
                "conv"));
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

// DeepLabV3's ASPP on a 14x14 map: dilated 24 (and 36), every outer tap
// reads padding only, so the conv is a 1x1 with no pads and dilation 1.
// Dilated 12, the outer taps reach the map's edge rows: nothing changes.
TEST(GraphPassesTest, ConvTapsReadingOnlyPaddingAreCropped) {
  for (const int64_t d : {24, 36}) {
    Graph after = expect_same_results(dilated_conv(14, 14, d, {d, d, d, d}), crop_conv_taps, 1);
    const Node& conv = after.node(after.find_node("conv"));
    EXPECT_EQ(after.value(conv.inputs[1]).constant->shape(), (Shape{5, 4, 1, 1}));
    EXPECT_EQ(conv.attrs.get_ints("pads", {}).value(), (Ints{0, 0, 0, 0}));
    EXPECT_EQ(conv.attrs.get_ints("dilations", {}).value(), (Ints{1, 1}));
  }
  expect_same_results(dilated_conv(14, 14, 12, {12, 12, 12, 12}), crop_conv_taps, 0);
  // One side only: a wide map (every column tap lives) and a short one
  // (the row taps above and below read padding), asymmetric pads.
  Graph rows = expect_same_results(dilated_conv(3, 40, 5, {5, 5, 6, 5}), crop_conv_taps, 1);
  const Node& conv = rows.node(rows.find_node("conv"));
  EXPECT_EQ(rows.value(conv.inputs[1]).constant->shape(), (Shape{5, 4, 1, 3}));
  EXPECT_EQ(conv.attrs.get_ints("pads", {}).value(), (Ints{0, 5, 1, 5}));
  EXPECT_EQ(conv.attrs.get_ints("dilations", {}).value(), (Ints{1, 5}));
  // Strided 3, dilated 4 on a 9x9 map: every tap reaches the map for some output.
  expect_same_results(dilated_conv(9, 9, 4, {4, 4, 4, 4}, 3), crop_conv_taps, 0);
}

// --- fold_input_affine ------------------------------------------------------------------------

// x [1,3,6,6] → (steps) → Conv with `w_shape` weights, no padding unless `pads`.
ValueId add_unpadded_conv(GraphBuilder& b, ValueId x, const Shape& w_shape, int64_t group, bool bias,
                          const Ints& pads = {0, 0, 0, 0}) {
  std::vector<ValueId> in = {x, b.constant("cw", random_tensor(w_shape, 31, -0.5f, 0.5f))};
  if (bias) in.push_back(b.constant("cb", random_tensor({w_shape[0]}, 32)));
  return b.op("Conv", in, {{"pads", pads}, {"group", group}}, "conv");
}

TEST(GraphPassesTest, InputAffineFoldsMulThenAddIntoAPointwiseConv) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  ValueId y = b.op("Mul", {x, b.constant("s", random_tensor({1, 3, 1, 1}, 33, -2.f, 2.f))});
  y = b.op("Add", {b.constant_f32("t", {}, {0.7f}), y});
  b.output(add_unpadded_conv(b, y, {4, 3, 1, 1}, 1, true));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_input_affine, 2);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).op, "Conv");
  EXPECT_EQ(after.node(0).inputs[0], after.find_value("x"));
}

TEST(GraphPassesTest, InputAffineFoldsSubAndDivIntoAnUnpaddedDepthwiseConv) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  ValueId y = b.op("Div", {x, b.constant_f32("d", {3, 1, 1}, {2.f, -0.5f, 4.f})});
  y = b.op("Sub", {y, b.constant_f32("t", {3, 1, 1}, {0.25f, -1.f, 0.5f})});
  b.output(add_unpadded_conv(b, y, {6, 1, 3, 3}, 3, false));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_input_affine, 2);
  EXPECT_EQ(after.num_nodes(), 1u);
}

TEST(GraphPassesTest, InputAffineFoldsOnlyTheScaleIntoAPaddedConv) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  ValueId y = b.op("Mul", {x, b.constant_f32("s", {1, 3, 1, 1}, {1.5f, -0.5f, 2.f})});
  y = b.op("Add", {y, b.constant_f32("t", {}, {0.75f})}, {}, "offset");
  b.output(add_unpadded_conv(b, y, {4, 3, 3, 3}, 1, true, {1, 1, 1, 1}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_input_affine, 1);
  ASSERT_EQ(after.num_nodes(), 2u);
  EXPECT_EQ(after.node(0).op, "Add");
  EXPECT_EQ(after.node(1).op, "Conv");
}

// MaxViT's MBConv: a GELU written out around Erf between two convs. Its
// last Mul by 0.5 would fold into the second conv, leaving a pattern that
// is no GELU; it stays, and fuse_gelu then makes it one Gelu.
TEST(GraphPassesTest, InputAffineLeavesAWrittenOutGeluWhole) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  const ValueId e = b.op("Erf", {b.op("Div", {x, b.constant_f32("sqrt2", {}, {1.41421356f})})});
  const ValueId gate = b.op("Add", {e, b.constant_f32("one", {}, {1.f})});
  const ValueId y = b.op("Mul", {b.op("Mul", {x, gate}), b.constant_f32("half", {}, {0.5f})});
  b.output(add_unpadded_conv(b, y, {4, 3, 1, 1}, 1, true));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_input_affine, 0);
  Graph fused = expect_same_results(after, fuse_gelu, 1);
  EXPECT_EQ(count_op(fused, "Gelu"), 1);
}

TEST(GraphPassesTest, InputAffineMovesADivPastASubBeforeAPaddedDepthwiseConv) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  ValueId y = b.op("Div", {x, b.constant_f32("d", {}, {-4.f})});
  y = b.op("Sub", {y, b.constant_f32("t", {3, 1, 1}, {0.5f, 1.f, -2.f})});
  b.output(add_unpadded_conv(b, y, {3, 1, 3, 3}, 3, false, {1, 0, 1, 2}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_input_affine, 1);
  ASSERT_EQ(after.num_nodes(), 2u);
  EXPECT_EQ(after.node(0).op, "Sub");
}

TEST(GraphPassesTest, InputAffineLeavesAPaddedConvAndASharedValue) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  const ValueId y = b.op("Add", {x, b.constant_f32("t", {}, {1.5f})});
  b.output(add_unpadded_conv(b, y, {4, 3, 3, 3}, 1, true, {1, 1, 1, 1}));
  const ValueId z = b.op("Mul", {x, b.constant_f32("s", {}, {3.f})});
  b.output(b.op("Conv", {z, b.constant("w2", random_tensor({2, 3, 1, 1}, 34))}, {}, "conv2"));
  b.output(z);
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fold_input_affine, 0);
  EXPECT_EQ(after.num_nodes(), g->num_nodes());
}

// --- fuse_hard_swish -----------------------------------------------------------------------------

TEST(GraphPassesTest, HardSwishFusesFromAddClipMulDiv) {
  GraphBuilder b("g");
  b.raw().set_opset(11);
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  const ValueId a = b.op("Add", {x, b.constant_f32("three", {}, {3.f})});
  const ValueId c = b.op("Clip", {a, b.constant_f32("lo", {}, {0.f}), b.constant_f32("hi", {}, {6.f})});
  const ValueId m = b.op("Mul", {x, c});
  b.output(b.op("Div", {m, b.constant_f32("six", {}, {6.f})}, {}, "hs"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fuse_hard_swish, 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).op, "HardSwish");
  EXPECT_EQ(output_names(after), std::vector<std::string>{"hs_out"});
}

TEST(GraphPassesTest, HardSwishFusesWithSwappedOperandsAndASixthAtOpset10) {
  GraphBuilder b("g");
  b.raw().set_opset(10);
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  const ValueId a = b.op("Add", {b.constant_f32("three", {1}, {3.f}), x});
  const ValueId c = b.op("Clip", {a}, {{"min", 0.f}, {"max", 6.f}});
  const ValueId m = b.op("Mul", {c, x});
  b.output(b.op("Mul", {b.constant_f32("sixth", {}, {1.f / 6.f}), m}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fuse_hard_swish, 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).op, "HardSwish");
}

TEST(GraphPassesTest, HardSwishFusesFromXTimesHardSigmoid) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 5}});
  const ValueId h = b.op("HardSigmoid", {x}, {{"alpha", 1.f / 6.f}, {"beta", 0.5f}});
  b.output(b.op("Mul", {x, h}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fuse_hard_swish, 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).op, "HardSwish");
}

TEST(GraphPassesTest, HardSwishDoesNotFuseOtherConstantsOrSharedValues) {
  GraphBuilder b("g");
  b.raw().set_opset(11);
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  // Clip to 5, not 6
  const ValueId a1 = b.op("Add", {x, b.constant_f32("three", {}, {3.f})});
  const ValueId c1 = b.op("Clip", {a1, b.constant_f32("lo", {}, {0.f}), b.constant_f32("five", {}, {5.f})});
  b.output(b.op("Div", {b.op("Mul", {x, c1}), b.constant_f32("six", {}, {6.f})}));
  // the clipped value is read twice
  const ValueId a2 = b.op("Add", {x, b.constant_f32("three2", {}, {3.f})});
  const ValueId c2 = b.op("Clip", {a2, b.constant_f32("lo2", {}, {0.f}), b.constant_f32("six2", {}, {6.f})});
  b.output(b.op("Div", {b.op("Mul", {x, c2}), b.constant_f32("six3", {}, {6.f})}));
  b.output(c2);
  // HardSigmoid of the default alpha 0.2
  b.output(b.op("Mul", {x, b.op("HardSigmoid", {x})}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fuse_hard_swish, 0);
  EXPECT_EQ(count_op(after, "HardSwish"), 0);
}

// --- fuse_gelu ------------------------------------------------------------------------------------

// PyTorch 2's export: x * ((Erf(x / sqrt2) + 1) * 0.5); Gelu's kernel
// (double erf) gives what the five nodes give within expect_same_results.
TEST(GraphPassesTest, GeluFusesFromErfWrittenOut) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 8}});
  const ValueId e = b.op("Erf", {b.op("Div", {x, b.constant_f32("sqrt2", {}, {1.4142135f})})});
  const ValueId gate = b.op("Mul", {b.constant_f32("half", {}, {0.5f}), b.op("Add", {e, b.constant_f32("one", {}, {1.f})})});
  b.output(b.op("Mul", {x, gate}, {}, "gelu"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fuse_gelu, 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).op, "Gelu");
  EXPECT_EQ(output_names(after), std::vector<std::string>{"gelu_out"});
}

TEST(GraphPassesTest, GeluDoesNotFuseOtherConstantsOrSharedValues) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 8}});
  // x / 2, not x / sqrt2
  const ValueId e1 = b.op("Erf", {b.op("Div", {x, b.constant_f32("two", {}, {2.f})})});
  b.output(b.op("Mul", {b.op("Mul", {x, b.op("Add", {e1, b.constant_f32("one", {}, {1.f})})}),
                        b.constant_f32("half", {}, {0.5f})}));
  // the erf is read twice
  const ValueId e2 = b.op("Erf", {b.op("Mul", {x, b.constant_f32("inv", {}, {0.70710678f})})});
  b.output(b.op("Mul", {b.op("Mul", {x, b.op("Add", {e2, b.constant_f32("one2", {}, {1.f})})}),
                        b.constant_f32("half2", {}, {0.5f})}));
  b.output(e2);
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fuse_gelu, 0);
  EXPECT_EQ(count_op(after, "Gelu"), 0);
}

// --- fuse_channel_shuffle ------------------------------------------------------------------------

// ShuffleNet's Reshape [N,g,C/g,H,W] -> Transpose [0,2,1,3,4] -> Reshape
// [N,C,H,W], for g 2 and 3; the fused op's portable kernel gives what the
// three nodes give (expect_same_results runs both on the portable kernels).
TEST(GraphPassesTest, ChannelShuffleFusesFromReshapeTransposeReshape) {
  for (const int64_t g : {2, 3}) {
    SCOPED_TRACE("group " + std::to_string(g));
    GraphBuilder b("g");
    const ValueId x = b.input("x", {DType::kFloat32, {2, 6, 3, 5}});
    const ValueId split = b.op("Reshape", {x, b.constant_i64("split", {5}, {2, g, 6 / g, 3, 5})});
    const ValueId t = b.op("Transpose", {split}, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}});
    b.output(b.op("Reshape", {t, b.constant_i64("back", {4}, {2, 6, 3, 5})}, {}, "shuffle"));
    auto graph = b.build();
    ASSERT_TRUE(graph.is_ok()) << graph.status().message();
    Graph after = expect_same_results(*graph, fuse_channel_shuffle, 1);
    ASSERT_EQ(count_op(after, kChannelShuffleOp), 1);
    EXPECT_EQ(after.num_nodes(), 1u);
    EXPECT_EQ(output_names(after), std::vector<std::string>{"shuffle_out"});
  }
}

// ShuffleNet's Concat of the two branches, then the shuffle: one node
// reading both branches.
TEST(GraphPassesTest, ChannelShuffleTakesInTheConcatBeforeIt) {
  GraphBuilder b("g");
  const ValueId a = b.input("a", {DType::kFloat32, {1, 4, 3, 3}});
  const ValueId c = b.input("c", {DType::kFloat32, {1, 4, 3, 3}});
  const ValueId cat = b.op("Concat", {a, b.op("Relu", {c})}, {{"axis", int64_t{1}}});
  const ValueId split = b.op("Reshape", {cat, b.constant_i64("split", {5}, {1, 2, 4, 3, 3})});
  const ValueId t = b.op("Transpose", {split}, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}});
  b.output(b.op("Reshape", {t, b.constant_i64("back", {4}, {1, 8, 3, 3})}, {}, "shuffle"));
  auto graph = b.build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Graph after = expect_same_results(*graph, fuse_channel_shuffle, 1);
  EXPECT_EQ(count_op(after, "Concat"), 0);
  ASSERT_EQ(count_op(after, kChannelShuffleOp), 1);
  EXPECT_EQ(after.num_nodes(), 2u);  // Relu and the shuffle
}

TEST(GraphPassesTest, ChannelShuffleDoesNotFuseOtherPermsOrSharedValues) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 2, 2}});
  // perm [0,1,2,4,3] is not a channel shuffle
  const ValueId s1 = b.op("Reshape", {x, b.constant_i64("s1", {5}, {1, 2, 2, 2, 2})});
  const ValueId t1 = b.op("Transpose", {s1}, {{"perm", std::vector<int64_t>{0, 1, 2, 4, 3}}});
  b.output(b.op("Reshape", {t1, b.constant_i64("b1", {4}, {1, 4, 2, 2})}));
  // the transposed value is read twice
  const ValueId s2 = b.op("Reshape", {x, b.constant_i64("s2", {5}, {1, 2, 2, 2, 2})});
  const ValueId t2 = b.op("Transpose", {s2}, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}});
  b.output(b.op("Reshape", {t2, b.constant_i64("b2", {4}, {1, 4, 2, 2})}));
  b.output(t2);
  auto graph = b.build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  Graph after = expect_same_results(*graph, fuse_channel_shuffle, 0);
  EXPECT_EQ(count_op(after, kChannelShuffleOp), 0);
}

// --- fuse_conv_activation ---------------------------------------------------------------------

struct ActivationCase {
  std::string op;
  std::vector<std::pair<std::string, Attribute>> attrs;
  int opset;
  std::vector<std::optional<float>> bound_inputs;  // Clip from opset 11: min, max (nullopt = omitted)
};

void PrintTo(const ActivationCase& c, std::ostream* os) { *os << c.op << " at opset " << c.opset; }

class FuseActivationTest : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(FuseActivationTest, FusesIntoConvAndKeepsResults) {
  const ActivationCase& c = GetParam();
  GraphBuilder b("g");
  b.raw().set_opset(c.opset);
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  std::vector<ValueId> in = {add_conv(b, x, true)};
  for (size_t i = 0; i < c.bound_inputs.size(); ++i)
    in.push_back(c.bound_inputs[i] ? b.constant_f32("bound" + std::to_string(i), {}, {*c.bound_inputs[i]}) : kNoValue);
  const ValueId act = b.op(c.op, in, {}, "act");
  for (const auto& [k, v] : c.attrs) b.raw().node(b.raw().find_node("act")).attrs.set(k, v);
  b.output(act);
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fuse_conv_activation, 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).op, "Conv");
  EXPECT_EQ(output_names(after), std::vector<std::string>{"act_out"});
  auto recorded = read_fused_activation(after.node(0).attrs);
  ASSERT_TRUE(recorded.is_ok()) << recorded.status().message();
  EXPECT_EQ(fused_activation_name(recorded->kind), c.op);
}

INSTANTIATE_TEST_SUITE_P(Activations, FuseActivationTest,
                         ::testing::Values(ActivationCase{"Relu", {}, 17, {}}, ActivationCase{"Sigmoid", {}, 17, {}},
                                           ActivationCase{"HardSwish", {}, 17, {}},
                                           ActivationCase{"HardSigmoid", {{"alpha", 0.3f}, {"beta", 0.4f}}, 17, {}},
                                           ActivationCase{"LeakyRelu", {{"alpha", 0.2f}}, 17, {}},
                                           ActivationCase{"Clip", {{"min", 0.f}, {"max", 0.5f}}, 10, {}},
                                           ActivationCase{"Clip", {}, 13, {0.f, 0.5f}},
                                           ActivationCase{"Clip", {}, 13, {std::nullopt, 0.25f}}),
                         [](const ::testing::TestParamInfo<ActivationCase>& info) {
                           return info.param.op + "Opset" + std::to_string(info.param.opset) + "_" +
                                  std::to_string(info.index);
                         });

TEST(GraphPassesTest, FusedClipRecordsBothBoundsWithInfinityForAnOmittedOne) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  b.output(b.op("Clip", {add_conv(b, x, true), kNoValue, b.constant_f32("hi", {}, {6.f})}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  ASSERT_TRUE(fuse_conv_activation(*g).is_ok());
  const Attributes& a = g->node(0).attrs;
  EXPECT_EQ(a.get_string(kActivationAttr, "").value(), "Clip");
  EXPECT_EQ(a.get_float(kActivationMinAttr, 0.f).value(), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(a.get_float(kActivationMaxAttr, 0.f).value(), 6.f);
}

TEST(GraphPassesTest, ClipWithBoundsComputedAtRunTimeDoesNotFuse) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  const ValueId lo = b.input("lo", {DType::kFloat32, {}});
  b.output(b.op("Clip", {add_conv(b, x, true), lo}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, fuse_conv_activation, 0);
  EXPECT_EQ(count_op(after, "Clip"), 1);
}

TEST(GraphPassesTest, ConvBatchNormReluBecomesOneConv) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  b.output(b.op("Relu", {add_batch_norm(b, add_conv(b, x, false))}, {}, "relu"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(
      *g,
      [](Graph& graph) -> Result<int> {
        HS_ASSIGN_OR_RETURN(int folded, fold_batch_norm_into_conv(graph));
        HS_ASSIGN_OR_RETURN(int fused, fuse_conv_activation(graph));
        return folded + fused;
      },
      2);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(output_names(after), std::vector<std::string>{"relu_out"});
}

TEST(GraphPassesTest, ReadFusedActivationRefusesAnUnknownName) {
  Attributes a;
  a.set(kActivationAttr, std::string("Gelu"));
  auto r = read_fused_activation(a);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("attribute 'activation' is 'Gelu'"), std::string::npos);
}

TEST(GraphPassesTest, FusedActivationFormulasMatchTheOnnxOps) {
  FusedActivation a;
  a.kind = FusedActivation::Kind::kHardSwish;
  EXPECT_FLOAT_EQ(a.apply(1.f), 1.f * (1.f / 6.f + 0.5f));  // x * clamp(x/6 + 1/2, 0, 1)
  EXPECT_FLOAT_EQ(a.apply(-4.f), 0.f);
  a.kind = FusedActivation::Kind::kClip;
  a.min = 0.f;
  a.max = 6.f;
  EXPECT_FLOAT_EQ(a.apply(7.f), 6.f);
  EXPECT_FLOAT_EQ(a.apply(-1.f), 0.f);
  a.kind = FusedActivation::Kind::kLeakyRelu;
  a.alpha = 0.1f;
  EXPECT_FLOAT_EQ(a.apply(-2.f), -0.2f);
}

// --- concat_of_slices_to_gather -------------------------------------------------------------

// torch.roll(x, (-3, 2), (1, 2)) as exporters write it: per axis, the tail
// and the head of x as Slices (int64 bounds, the end INT64_MAX; axes as an
// input; the second with steps 1), concatenated. Both Concats become
// Gathers. A Concat of Slices along another axis than its own, one of a
// Slice with step 2, and one of a Slice that another node reads stay.
TEST(GraphPassesTest, ConcatsOfSlicesAlongTheirAxisBecomeGathers) {
  GraphBuilder b("g");
  b.raw().set_opset(18);
  const ValueId x = b.input("x", {DType::kFloat32, {1, 7, 6, 5}});
  const auto ints = [&](const std::string& name, std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return b.constant(name, Tensor::from_vector(DType::kInt64, {n}, std::move(v)));
  };
  const int64_t kEnd = std::numeric_limits<int64_t>::max();
  const ValueId r = b.op("Relu", {x});
  const ValueId tail1 = b.op("Slice", {r, ints("s1", {-3}), ints("e1", {kEnd}), ints("a1", {1})});
  const ValueId head1 = b.op("Slice", {r, ints("s2", {0}), ints("e2", {-3}), ints("a2", {1}), ints("st2", {1})});
  const ValueId roll1 = b.op("Concat", {tail1, head1}, {{"axis", int64_t{1}}}, "roll1");
  const ValueId tail2 = b.op("Slice", {roll1, ints("s3", {4}), ints("e3", {kEnd}), ints("a3", {-2})});
  const ValueId head2 = b.op("Slice", {roll1, ints("s4", {0}), ints("e4", {4}), ints("a4", {2})});
  const ValueId roll2 = b.op("Concat", {tail2, head2}, {{"axis", int64_t{2}}}, "roll2");
  // Along axis 2, concatenated along axis 1: stays.
  const ValueId w1 = b.op("Slice", {roll2, ints("s5", {0}), ints("e5", {3}), ints("a5", {2})});
  const ValueId w2 = b.op("Slice", {roll2, ints("s6", {3}), ints("e6", {6}), ints("a6", {2})});
  const ValueId other_axis = b.op("Concat", {w1, w2}, {{"axis", int64_t{1}}}, "other_axis");
  // Step 2: stays.
  const ValueId even = b.op("Slice", {roll2, ints("s7", {0}), ints("e7", {7}), ints("a7", {1}), ints("st7", {2})});
  const ValueId odd = b.op("Slice", {roll2, ints("s8", {1}), ints("e8", {7}), ints("a8", {1}), ints("st8", {2})});
  const ValueId stepped = b.op("Concat", {even, odd}, {{"axis", int64_t{1}}}, "stepped");
  // A Slice that Neg reads too: stays.
  const ValueId shared = b.op("Slice", {roll2, ints("s9", {2}), ints("e9", {7}), ints("a9", {1})});
  const ValueId rest = b.op("Slice", {roll2, ints("s10", {0}), ints("e10", {2}), ints("a10", {1})});
  const ValueId shared_concat = b.op("Concat", {shared, rest}, {{"axis", int64_t{1}}}, "shared");
  b.output(b.op("Sigmoid", {roll2}, {}, "sig"));
  b.output(other_axis);
  b.output(stepped);
  b.output(shared_concat);
  b.output(b.op("Neg", {shared}, {}, "neg"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, concat_of_slices_to_gather, 2);
  EXPECT_EQ(after.node(after.find_node("roll1")).op, "Gather");
  EXPECT_EQ(after.node(after.find_node("roll2")).op, "Gather");
  EXPECT_EQ(after.node(after.find_node("other_axis")).op, "Concat");
  EXPECT_EQ(after.node(after.find_node("stepped")).op, "Concat");
  EXPECT_EQ(after.node(after.find_node("shared")).op, "Concat");
  EXPECT_EQ(count_op(after, "Slice"), 6);
}

// --- remove_identity_nodes ------------------------------------------------------------------

TEST(GraphPassesTest, IdentityAndDropoutInTheMiddleAreRemoved) {
  GraphBuilder b("g");
  b.raw().set_opset(13);
  const ValueId x = b.input("x", {DType::kFloat32, {2, 5}});
  const ValueId i = b.op("Identity", {b.op("Relu", {x})});
  const ValueId d = b.op("Dropout", {i, b.constant_f32("ratio", {}, {0.5f})});
  b.output(b.op("Sigmoid", {d}, {}, "sig"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, remove_identity_nodes, 2);
  EXPECT_EQ(after.num_nodes(), 2u);
  EXPECT_EQ(output_names(after), std::vector<std::string>{"sig_out"});
}

// PyTorch 1.13 exports Swin's attention dropouts with p = 0, training_mode
// true and a mask nobody reads: they drop nothing and go. One whose mask is
// read stays (its kernel writes the mask all true), and so does one that
// would drop at random (ratio 0.5 in training mode), for the kernel to refuse.
TEST(GraphPassesTest, DropoutWithAnUnreadMaskAndZeroRatioIsRemoved) {
  GraphBuilder b("g");
  b.raw().set_opset(13);
  const ValueId x = b.input("x", {DType::kFloat32, {2, 5}});
  const ValueId zero = b.constant_f32("zero", {}, {0.f});
  const ValueId on = b.constant("on", Tensor::from_vector(DType::kBool, {}, std::vector<uint8_t>{1}));
  const std::vector<ValueId> unread = b.op_multi("Dropout", {b.op("Relu", {x}), zero, on}, 2, {}, "unread");
  const std::vector<ValueId> read = b.op_multi("Dropout", {unread[0], zero, on}, 2, {}, "read");
  b.output(b.op("Sigmoid", {read[0]}, {}, "sig"));
  b.output(b.op("Not", {read[1]}, {}, "not"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, remove_identity_nodes, 1);
  EXPECT_EQ(after.find_node("unread"), kNoNode);
  EXPECT_NE(after.find_node("read"), kNoNode);

  GraphBuilder r("random");
  r.raw().set_opset(13);
  const ValueId y = r.input("y", {DType::kFloat32, {2, 5}});
  r.output(r.op_multi("Dropout", {y, r.constant_f32("half", {}, {0.5f}),
                                  r.constant("on", Tensor::from_vector(DType::kBool, {}, std::vector<uint8_t>{1}))},
                      2, {}, "random")[0]);
  Graph random = std::move(r.raw());
  ASSERT_TRUE(remove_identity_nodes(random).is_ok());
  EXPECT_NE(random.find_node("random"), kNoNode);
}

// AlexNet's AdaptiveAvgPool2d((6, 6)) on a 6x6 map, as exported: a 1x1
// AveragePool at stride 1, which goes (and a 1x1 MaxPool so). A 1x1 pool
// at stride 2 and a MaxPool with its Indices stay.
TEST(GraphPassesTest, PoolsOfOneElementAreRemoved) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  using Ints = std::vector<int64_t>;
  const ValueId a =
      b.op("AveragePool", {b.op("Relu", {x})}, {{"kernel_shape", Ints{1, 1}}, {"strides", Ints{1, 1}}}, "avg");
  const ValueId m = b.op("MaxPool", {a}, {{"kernel_shape", Ints{1, 1}}}, "max");
  const ValueId s2 = b.op("AveragePool", {m}, {{"kernel_shape", Ints{1, 1}}, {"strides", Ints{2, 2}}}, "strided");
  const std::vector<ValueId> indexed = b.op_multi("MaxPool", {m}, 2, {{"kernel_shape", Ints{1, 1}}}, "indexed");
  b.output(b.op("Sigmoid", {s2}, {}, "sig"));
  b.output(indexed[0]);
  b.output(indexed[1]);
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, remove_identity_nodes, 2);
  EXPECT_EQ(after.find_node("avg"), kNoNode);
  EXPECT_EQ(after.find_node("max"), kNoNode);
  EXPECT_NE(after.find_node("strided"), kNoNode);
  EXPECT_NE(after.find_node("indexed"), kNoNode);
}

TEST(GraphPassesTest, IdentityToAGraphOutputKeepsTheOutputName) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 5}});
  const ValueId r = b.op("Relu", {x}, {}, "relu");
  b.output(b.op("Identity", {r}, {}, "ident"));
  b.output(b.op("Neg", {r}, {}, "neg"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, remove_identity_nodes, 1);
  EXPECT_EQ(count_op(after, "Identity"), 0);
  EXPECT_EQ(output_names(after), (std::vector<std::string>{"ident_out", "neg_out"}));
  // Relu now writes the output value itself, and Neg reads it.
  EXPECT_EQ(after.value(after.outputs()[0]).producer, after.find_node("relu"));
  EXPECT_EQ(after.node(after.find_node("neg")).inputs[0], after.outputs()[0]);
}

TEST(GraphPassesTest, IdentityOfAGraphInputToAnOutputStays) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {3}});
  b.output(b.op("Identity", {x}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, remove_identity_nodes, 0);
  EXPECT_EQ(after.num_nodes(), 1u);
}

// --- fold_constants and remove_dead_nodes ---------------------------------------------------------

TEST(GraphPassesTest, ShapeGatherConcatReshapeChainFoldsIntoAConstantShape) {
  // reshape x [2,3,4] to [x.shape[0], -1] through the usual exporter chain.
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4}});
  const ValueId shape = b.op("Shape", {x});
  const ValueId batch = b.op("Gather", {shape, b.constant_i64("zero", {}, {0})});
  const ValueId batch1 = b.op("Unsqueeze", {batch, b.constant_i64("axes", {1}, {0})});
  const ValueId target = b.op("Concat", {batch1, b.constant_i64("minus_one", {1}, {-1})}, {{"axis", int64_t{0}}});
  b.output(b.op("Reshape", {x, target}, {}, "reshape"));
  Graph g = std::move(b.raw());
  // The unfolded graph cannot be shape-inferred: Reshape's shape is not a constant yet.
  Graph unfolded = g;
  EXPECT_FALSE(check_graph(unfolded).is_ok());
  ASSERT_TRUE(apply_input_shapes(g, {}).is_ok());
  auto folded = fold_constants(g, cpu::reference_node_evaluator());
  ASSERT_TRUE(folded.is_ok()) << folded.status().message();
  EXPECT_EQ(*folded, 4);
  ASSERT_TRUE(check_graph(g).is_ok());
  ASSERT_EQ(g.num_nodes(), 1u);
  const Value& shape_value = g.value(g.node(0).inputs[1]);
  ASSERT_TRUE(shape_value.is_constant());
  EXPECT_EQ(shape_value.constant->to_int64_vector(), (Ints{2, -1}));
  auto out = cpu::run_graph_reference(g, {random_tensor({2, 3, 4}, 3)});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 12}));
}

TEST(GraphPassesTest, ConstantArithmeticFoldsAndResultsStayEqual) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 3}});
  const ValueId scale = b.op("Mul", {b.constant_f32("a", {3}, {1.f, 2.f, 3.f}), b.constant_f32("b", {}, {0.5f})});
  b.output(b.op("Add", {x, scale}, {}, "add"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(
      *g, [](Graph& graph) { return fold_constants(graph, cpu::reference_node_evaluator()); }, 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  const Value& folded = after.value(after.node(0).inputs[1]);
  ASSERT_TRUE(folded.is_constant());
  EXPECT_EQ(folded.constant->to_float_vector(), (Floats{0.5f, 1.f, 1.5f}));
}

TEST(GraphPassesTest, NodesWritingGraphOutputsAreNotFolded) {
  GraphBuilder b("g");
  b.input("x", {DType::kFloat32, {2}});
  b.output(b.op("Neg", {b.constant_f32("c", {2}, {1.f, 2.f})}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto folded = fold_constants(*g, cpu::reference_node_evaluator());
  ASSERT_TRUE(folded.is_ok());
  EXPECT_EQ(*folded, 0);
  EXPECT_EQ(g->num_nodes(), 1u);
}

TEST(GraphPassesTest, DeadNodesAndTheirConstantsAreRemoved) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {4}});
  b.op("Mul", {x, b.constant_f32("unused_scale", {}, {3.f})}, {}, "dead");
  b.output(b.op("Relu", {x}, {}, "live"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph after = expect_same_results(*g, remove_dead_nodes, 1);
  ASSERT_EQ(after.num_nodes(), 1u);
  EXPECT_EQ(after.node(0).name, "live");
  EXPECT_EQ(after.find_value("unused_scale"), kNoValue);
}

// --- the whole clean-up -------------------------------------------------------------------------

TEST(GraphPassesTest, CleanupRunsEveryPassAndKeepsResults) {
  GraphBuilder b("g");
  b.raw().set_opset(15);  // Shape's end attribute
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  const ValueId c = add_batch_norm(b, add_conv(b, x, true));
  const ValueId r = b.op("Clip", {c, b.constant_f32("lo", {}, {0.f}), b.constant_f32("hi", {}, {6.f})});
  const ValueId i = b.op("Identity", {r});
  const ValueId flat =
      b.op("Reshape", {i, b.op("Concat", {b.op("Shape", {i}, {{"end", int64_t{1}}}), b.constant_i64("rest", {1}, {-1})},
                               {{"axis", int64_t{0}}})});
  b.output(b.op("Identity", {flat}, {}, "out"));
  Graph g = std::move(b.raw());
  Graph cleaned = g;
  auto stats = cleanup_graph(cleaned, {});
  ASSERT_TRUE(stats.is_ok()) << stats.status().message();
  EXPECT_EQ(stats->folded, 2);  // Shape, Concat
  EXPECT_EQ(stats->identities_removed, 2);
  EXPECT_EQ(stats->batch_norms_folded, 1);
  EXPECT_EQ(stats->activations_fused, 1);
  ASSERT_TRUE(check_graph(cleaned).is_ok());
  EXPECT_EQ(cleaned.num_nodes(), 2u);  // Conv (BN + Clip folded in), Reshape
  EXPECT_EQ(output_names(cleaned), std::vector<std::string>{"out_out"});
  // The reference: the original graph with its shape chain folded by hand.
  ASSERT_TRUE(apply_input_shapes(g, {}).is_ok());
  ASSERT_TRUE(fold_constants(g, cpu::reference_node_evaluator()).is_ok());
  ASSERT_TRUE(check_graph(g).is_ok());
  EXPECT_EQ(g.num_nodes(), 6u);
  auto inputs = random_inputs(g, 5);
  auto want = cpu::run_graph_reference(g, inputs);
  auto got = cpu::run_graph_reference(cleaned, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  expect_close(*want, *got);
}

// PP-OCRv4's block: Conv, a learnable affine step, HardSwish written out.
TEST(GraphPassesTest, CleanupTurnsConvAffineAndWrittenOutHardSwishIntoOneConv) {
  GraphBuilder b("g");
  b.raw().set_opset(11);
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 6}});
  ValueId y = b.op("Mul", {add_conv(b, x, true), b.constant_f32("s", {1}, {1.5f})});
  y = b.op("Add", {y, b.constant_f32("t", {1}, {-0.25f})});
  const ValueId a = b.op("Add", {y, b.constant_f32("three", {}, {3.f})});
  const ValueId c = b.op("Clip", {a, b.constant_f32("lo", {}, {0.f}), b.constant_f32("hi", {}, {6.f})});
  b.output(b.op("Div", {b.op("Mul", {y, c}), b.constant_f32("six", {}, {6.f})}, {}, "out"));
  Graph g = std::move(b.raw());
  Graph cleaned = g;
  auto stats = cleanup_graph(cleaned, {});
  ASSERT_TRUE(stats.is_ok()) << stats.status().message();
  EXPECT_EQ(stats->affine_folded, 2);
  EXPECT_EQ(stats->hard_swishes_fused, 1);
  EXPECT_EQ(stats->activations_fused, 1);
  ASSERT_TRUE(check_graph(cleaned).is_ok());
  ASSERT_EQ(cleaned.num_nodes(), 1u);
  EXPECT_EQ(cleaned.node(0).attrs.get_string(kActivationAttr, "").value(), "HardSwish");
  EXPECT_EQ(output_names(cleaned), std::vector<std::string>{"out_out"});
  ASSERT_TRUE(apply_input_shapes(g, {}).is_ok());
  ASSERT_TRUE(check_graph(g).is_ok());
  for (uint32_t seed : {3u, 9u}) {
    auto inputs = random_inputs(g, seed);
    auto want = cpu::run_graph_reference(g, inputs);
    auto got = cpu::run_graph_reference(cleaned, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    expect_close(*want, *got);
  }
}

}  // namespace
}  // namespace hetsched
