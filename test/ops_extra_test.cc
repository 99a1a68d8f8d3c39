// The extra ops (graph/ops_extra.cc): shape inference and the portable CPU
// kernels, one node at a time.
//
// Expected values are worked out by hand in the comments or were printed by
// numpy (/usr/bin/python3: astype, erf, log, round, sum/max/min/prod,
// argmax/argmin, and ConvTranspose written as the scatter loop of the ONNX
// definition) and pasted here. Inputs come from pattern(), as in
// kernels_nn_test.cc: ((i * 7 + seed) % 13 - 6) / 4.
#include "graph/ops_extra.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_reference.h"
#include "graph/builder.h"

namespace hetsched {
namespace {

using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;
using AttrList = std::initializer_list<std::pair<std::string, Attribute>>;
using Inputs = std::vector<std::optional<Tensor>>;

Tensor pattern(const Shape& shape, int seed) {
  Tensor t(TensorType{DType::kFloat32, shape});
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<float>((i * 7 + seed) % 13 - 6) * 0.25f;
  return t;
}
Tensor f32(Shape shape, const Floats& v) { return Tensor::from_vector(DType::kFloat32, std::move(shape), v); }
Tensor i64(Shape shape, const Ints& v) { return Tensor::from_vector(DType::kInt64, std::move(shape), v); }
Tensor boolean(Shape shape, const std::vector<uint8_t>& v) {
  return Tensor::from_vector(DType::kBool, std::move(shape), v);
}

// A graph of one `op` node over constant inputs (std::nullopt = omitted),
// shape-inferred at `opset` and run with the CPU kernels.
Result<std::vector<Tensor>> run_op(const std::string& op, const Inputs& inputs, AttrList attrs = {}, int opset = 17,
                                   int num_outputs = 1) {
  GraphBuilder b("g");
  b.raw().set_opset(opset);
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i)
    ids.push_back(inputs[i] ? b.constant("in" + std::to_string(i), *inputs[i]) : kNoValue);
  for (ValueId out : b.op_multi(op, ids, num_outputs, attrs, "n")) b.output(out);
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  return cpu::run_graph_reference(g, {});
}

Result<Tensor> run1(const std::string& op, const Inputs& inputs, AttrList attrs = {}, int opset = 17) {
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> outs, run_op(op, inputs, attrs, opset));
  return std::move(outs[0]);
}

// The status of shape inference for one node (the graph is not run).
Status infer_status(const std::string& op, const Inputs& inputs, AttrList attrs = {}, int opset = 17,
                    int num_outputs = 1) {
  GraphBuilder b("g");
  b.raw().set_opset(opset);
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i)
    ids.push_back(inputs[i] ? b.constant("in" + std::to_string(i), *inputs[i]) : kNoValue);
  for (ValueId out : b.op_multi(op, ids, num_outputs, attrs, "n")) b.output(out);
  return b.build().status();
}

void expect_f32(const Result<Tensor>& r, const Shape& shape, const Floats& expected, float tol = 1e-6f) {
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->dtype(), DType::kFloat32);
  ASSERT_EQ(r->shape(), shape);
  ASSERT_EQ(static_cast<size_t>(r->num_elements()), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(r->data<float>()[i], expected[i], tol + tol * std::abs(expected[i])) << "element " << i;
}

void expect_ints(const Result<Tensor>& r, DType dtype, const Shape& shape, const Ints& expected) {
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->dtype(), dtype);
  ASSERT_EQ(r->shape(), shape);
  EXPECT_EQ(r->to_int64_vector(), expected);
}

void expect_error(const Status& s, StatusCode code, const std::string& fragment) {
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

const Tensor kCastInput = f32({6}, {-1.7f, -0.5f, 0.f, 0.5f, 2.9f, 300.2f});

// --- Cast ----------------------------------------------------------------------------

TEST(OpsExtraTest, CastTruncatesFloatsTowardZeroLikeNumpy) {
  expect_ints(run1("Cast", {kCastInput}, {{"to", int64_t{7}}}), DType::kInt64, {6}, {-1, 0, 0, 0, 2, 300});
}

TEST(OpsExtraTest, CastWrapsIntoNarrowIntegerTypesLikeNumpy) {
  // numpy: astype(uint8) → [255, 0, 0, 0, 2, 44], astype(int8) → [-1, 0, 0, 0, 2, 44]
  expect_ints(run1("Cast", {kCastInput}, {{"to", int64_t{2}}}), DType::kUInt8, {6}, {255, 0, 0, 0, 2, 44});
  expect_ints(run1("Cast", {kCastInput}, {{"to", int64_t{3}}}), DType::kInt8, {6}, {-1, 0, 0, 0, 2, 44});
  // 2^31 + 5 as int32 is -2^31 + 5.
  expect_ints(run1("Cast", {i64({2}, {2147483653LL, -3})}, {{"to", int64_t{6}}}), DType::kInt32, {2},
              {-2147483643LL, -3});
}

TEST(OpsExtraTest, CastToBoolIsNonZeroAndBackToFloatIsZeroOrOne) {
  expect_ints(run1("Cast", {kCastInput}, {{"to", int64_t{9}}}), DType::kBool, {6}, {1, 1, 0, 1, 1, 1});
  expect_f32(run1("Cast", {boolean({3}, {1, 0, 1})}, {{"to", int64_t{1}}}), {3}, {1.f, 0.f, 1.f});
  expect_f32(run1("Cast", {i64({2}, {-4, 1LL << 40})}, {{"to", int64_t{1}}}), {2}, {-4.f, 1099511627776.f});
}

TEST(OpsExtraTest, CastRefusesATargetWithoutDtype) {
  expect_error(infer_status("Cast", {kCastInput}, {{"to", int64_t{11}}}), StatusCode::kUnsupported,
               "node 'n' (Cast): attribute 'to' = 11 is not a supported target");
}

// --- Shape, ConstantOfShape, Range, Expand, Tile -------------------------------------

TEST(OpsExtraTest, ShapeGivesDimsAndHonoursStartAndEnd) {
  const Tensor x(TensorType{DType::kFloat32, {2, 3, 4, 5}});
  expect_ints(run1("Shape", {x}), DType::kInt64, {4}, {2, 3, 4, 5});
  expect_ints(run1("Shape", {x}, {{"start", int64_t{1}}}), DType::kInt64, {3}, {3, 4, 5});
  expect_ints(run1("Shape", {x}, {{"start", int64_t{-3}}, {"end", int64_t{-1}}}), DType::kInt64, {2}, {3, 4});
  // Out-of-range bounds clamp; an empty range gives an empty tensor.
  expect_ints(run1("Shape", {x}, {{"start", int64_t{-10}}, {"end", int64_t{10}}}), DType::kInt64, {4}, {2, 3, 4, 5});
  expect_ints(run1("Shape", {x}, {{"start", int64_t{3}}, {"end", int64_t{1}}}), DType::kInt64, {0}, {});
}

TEST(OpsExtraTest, ConstantOfShapeFillsWithTheValueAttribute) {
  expect_ints(run1("ConstantOfShape", {i64({2}, {2, 3})}, {{"value", i64({1}, {7})}}), DType::kInt64, {2, 3},
              {7, 7, 7, 7, 7, 7});
  expect_f32(run1("ConstantOfShape", {i64({1}, {3})}), {3}, {0.f, 0.f, 0.f});
}

TEST(OpsExtraTest, RangeCountsCeilOfSpanOverDelta) {
  // ceil((1 - 10) / -3) = 3 elements: 10, 7, 4.
  expect_ints(run1("Range", {i64({}, {10}), i64({}, {1}), i64({}, {-3})}), DType::kInt64, {3}, {10, 7, 4});
  expect_f32(run1("Range", {f32({}, {0.f}), f32({}, {1.f}), f32({}, {0.25f})}), {4}, {0.f, 0.25f, 0.5f, 0.75f});
  // A span of the wrong sign gives nothing.
  expect_ints(run1("Range", {i64({}, {0}), i64({}, {5}), i64({}, {-1})}), DType::kInt64, {0}, {});
}

TEST(OpsExtraTest, ExpandBroadcastsBothWays) {
  // [3,1] with shape [2,1,4] → [2,3,4]; each row repeats its one value.
  Result<Tensor> r = run1("Expand", {f32({3, 1}, {1.f, 2.f, 3.f}), i64({3}, {2, 1, 4})});
  Floats expected;
  for (int n = 0; n < 2; ++n)
    for (float v : {1.f, 2.f, 3.f})
      for (int k = 0; k < 4; ++k) expected.push_back(v);
  expect_f32(r, {2, 3, 4}, expected);
  expect_error(infer_status("Expand", {f32({3}, {1, 2, 3}), i64({1}, {2})}), StatusCode::kInvalidArgument,
               "cannot expand f32[3] to [2]");
}

TEST(OpsExtraTest, TileRepeatsEachDim) {
  // [[1,2],[3,4]] tiled (2, 2) → 4x4.
  expect_ints(run1("Tile", {i64({2, 2}, {1, 2, 3, 4}), i64({2}, {2, 2})}), DType::kInt64, {4, 4},
              {1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
  expect_error(infer_status("Tile", {i64({2, 2}, {1, 2, 3, 4}), i64({1}, {2})}), StatusCode::kInvalidArgument,
               "must have one value per dim");
}

// --- Split ------------------------------------------------------------------------------

TEST(OpsExtraTest, SplitTakesSizesAsAttributeBeforeOpset13) {
  // 2x3 split along axis 1 into [1, 2].
  auto r = run_op("Split", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"axis", int64_t{1}}, {"split", Ints{1, 2}}}, 11, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  expect_f32((*r)[0], {2, 1}, {1, 4});
  expect_f32((*r)[1], {2, 2}, {2, 3, 5, 6});
}

TEST(OpsExtraTest, SplitTakesSizesAsInputFromOpset13) {
  auto r = run_op("Split", {f32({5}, {1, 2, 3, 4, 5}), i64({2}, {3, 2})}, {}, 13, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  expect_f32((*r)[0], {3}, {1, 2, 3});
  expect_f32((*r)[1], {2}, {4, 5});
  // The attribute form is refused at opset 13.
  expect_error(infer_status("Split", {f32({4}, {1, 2, 3, 4})}, {{"split", Ints{2, 2}}}, 13, 2),
               StatusCode::kInvalidArgument, "split is input 1 from opset 13 on");
}

TEST(OpsExtraTest, SplitWithoutSizesSplitsEvenlyOrRefuses) {
  auto r = run_op("Split", {f32({2, 2}, {1, 2, 3, 4})}, {}, 13, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  expect_f32((*r)[0], {1, 2}, {1, 2});
  expect_f32((*r)[1], {1, 2}, {3, 4});
  expect_error(infer_status("Split", {f32({3}, {1, 2, 3})}, {}, 13, 2), StatusCode::kInvalidArgument,
               "does not split evenly into 2 outputs");
}

// --- Pad ----------------------------------------------------------------------------------

const Tensor kPadInput = f32({2, 3}, {1, 2, 3, 4, 5, 6});

TEST(OpsExtraTest, PadConstantTakesPadsAndValueAsInputsFromOpset11) {
  // pads [0,1,1,0]: one column before, one row after, filled with 9.
  expect_f32(run1("Pad", {kPadInput, i64({4}, {0, 1, 1, 0}), f32({}, {9.f})}, {}, 11), {3, 4},
             {9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9});
  // Without constant_value the fill is 0.
  expect_f32(run1("Pad", {kPadInput, i64({4}, {1, 0, 0, 0})}, {}, 13), {3, 3}, {0, 0, 0, 1, 2, 3, 4, 5, 6});
}

TEST(OpsExtraTest, PadTakesAttributesBeforeOpset11) {
  expect_f32(run1("Pad", {kPadInput}, {{"pads", Ints{0, 1, 0, 1}}, {"value", 7.f}}, 10), {2, 5},
             {7, 1, 2, 3, 7, 7, 4, 5, 6, 7});
  expect_error(infer_status("Pad", {kPadInput}, {{"pads", Ints{0, 1, 0, 1}}}, 11), StatusCode::kInvalidArgument,
               "needs input 1 (pads) from opset 11 on");
}

TEST(OpsExtraTest, PadReflectMirrorsWithoutTheEdgeAndEdgeRepeatsIt) {
  // numpy.pad([[1,2,3],[4,5,6]], ((0,0),(2,1)), 'reflect') = [[3,2,1,2,3,2],[6,5,4,5,6,5]]
  expect_f32(run1("Pad", {kPadInput, i64({4}, {0, 2, 0, 1})}, {{"mode", std::string("reflect")}}, 11), {2, 6},
             {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5});
  // 'edge' with one row before: [[1,2,3],[1,2,3],[4,5,6]] plus one column after.
  expect_f32(run1("Pad", {kPadInput, i64({4}, {1, 0, 0, 1})}, {{"mode", std::string("edge")}}, 11), {3, 4},
             {1, 2, 3, 3, 1, 2, 3, 3, 4, 5, 6, 6});
  expect_error(infer_status("Pad", {kPadInput, i64({4}, {0, 3, 0, 0})}, {{"mode", std::string("reflect")}}, 11),
               StatusCode::kInvalidArgument, "reflect pads");
}

TEST(OpsExtraTest, PadNegativePadsCrop) {
  expect_f32(run1("Pad", {kPadInput, i64({4}, {0, -1, 0, 0})}, {}, 11), {2, 2}, {2, 3, 5, 6});
}

// --- Dropout --------------------------------------------------------------------------------

TEST(OpsExtraTest, DropoutPassesItsInputThrough) {
  expect_f32(run1("Dropout", {kPadInput, f32({}, {0.5f})}, {}, 13), {2, 3}, {1, 2, 3, 4, 5, 6});
}

// The mask, asked for, is all true; training mode drops nothing at a
// constant ratio of 0 (PyTorch 1.13's Swin export) and is refused at any
// other ratio, the default 0.5 included.
TEST(OpsExtraTest, DropoutWritesAnAllTrueMaskAndRefusesTrainingModeThatDrops) {
  for (const Inputs& inputs : std::vector<Inputs>{{kPadInput}, {kPadInput, f32({}, {0.f}), boolean({}, {1})}}) {
    const Result<std::vector<Tensor>> outs = run_op("Dropout", inputs, {}, 13, 2);
    ASSERT_TRUE(outs.is_ok()) << outs.status().message();
    expect_f32((*outs)[0], {2, 3}, {1, 2, 3, 4, 5, 6});
    expect_ints((*outs)[1], DType::kBool, {2, 3}, {1, 1, 1, 1, 1, 1});
  }
  expect_error(infer_status("Dropout", {kPadInput, std::nullopt, boolean({}, {1})}, {}, 13), StatusCode::kUnsupported,
               "training_mode = true with a ratio other than a constant 0 drops at random");
  expect_error(infer_status("Dropout", {kPadInput, f32({}, {0.1f}), boolean({}, {1})}, {}, 13, 2),
               StatusCode::kUnsupported, "drops at random");
}

// --- comparisons and logic --------------------------------------------------------------------

TEST(OpsExtraTest, ComparisonsBroadcastAndGiveBool) {
  const Tensor a = i64({2, 2}, {1, 5, 3, 2});
  const Tensor b = i64({2}, {3, 2});
  expect_ints(run1("Equal", {a, b}), DType::kBool, {2, 2}, {0, 0, 1, 1});
  expect_ints(run1("Less", {a, b}), DType::kBool, {2, 2}, {1, 0, 0, 0});
  expect_ints(run1("Greater", {a, b}), DType::kBool, {2, 2}, {0, 1, 0, 0});
  expect_ints(run1("GreaterOrEqual", {a, b}), DType::kBool, {2, 2}, {0, 1, 1, 1});
  expect_ints(run1("Less", {f32({2}, {-1.f, 2.f}), f32({}, {0.f})}), DType::kBool, {2}, {1, 0});
  expect_error(infer_status("Less", {a, f32({1}, {1.f})}), StatusCode::kInvalidArgument, "input types differ");
}

TEST(OpsExtraTest, BroadcastingOpsWorkOnScalars) {
  // Shape sub-graphs compute on rank-0 tensors (a Gather of one dim), so
  // every broadcasting kernel must take scalars.
  expect_ints(run1("Less", {i64({}, {1}), i64({}, {2})}), DType::kBool, {}, {1});
  expect_ints(run1("Sum", {i64({}, {3}), i64({}, {4})}), DType::kInt64, {}, {7});
  expect_ints(run1("Where", {boolean({}, {0}), i64({}, {5}), i64({}, {6})}), DType::kInt64, {}, {6});
  expect_ints(run1("Expand", {i64({}, {9}), i64({1}, {2})}), DType::kInt64, {2}, {9, 9});
}

TEST(OpsExtraTest, LogicOpsWorkOnBool) {
  const Tensor p = boolean({4}, {0, 0, 1, 1});
  const Tensor q = boolean({4}, {0, 1, 0, 1});
  expect_ints(run1("And", {p, q}), DType::kBool, {4}, {0, 0, 0, 1});
  expect_ints(run1("Or", {p, q}), DType::kBool, {4}, {0, 1, 1, 1});
  expect_ints(run1("Xor", {p, q}), DType::kBool, {4}, {0, 1, 1, 0});
  expect_ints(run1("Not", {p}), DType::kBool, {4}, {1, 1, 0, 0});
}

TEST(OpsExtraTest, WhereBroadcastsItsThreeInputs) {
  // cond [2,1], X [1,3], Y scalar → [2,3]: row 0 takes X, row 1 takes Y.
  expect_f32(run1("Where", {boolean({2, 1}, {1, 0}), f32({1, 3}, {1, 2, 3}), f32({}, {-1.f})}), {2, 3},
             {1, 2, 3, -1, -1, -1});
  expect_ints(run1("Where", {boolean({3}, {0, 1, 0}), i64({3}, {1, 2, 3}), i64({3}, {7, 8, 9})}), DType::kInt64, {3},
              {7, 2, 9});
}

// --- math ---------------------------------------------------------------------------------------

TEST(OpsExtraTest, UnaryMathMatchesNumpy) {
  expect_f32(run1("Erf", {f32({5}, {-2.f, -0.5f, 0.f, 0.3f, 1.5f})}), {5},
             {-0.9953222870826721f, -0.5204998850822449f, 0.f, 0.3286267817020416f, 0.9661051630973816f});
  expect_f32(run1("Log", {f32({4}, {0.5f, 1.f, 2.f, 10.f})}), {4},
             {-0.6931471824645996f, 0.f, 0.6931471824645996f, 2.3025851249694824f});
  expect_f32(run1("Floor", {f32({3}, {-1.5f, 0.5f, 2.f})}), {3}, {-2.f, 0.f, 2.f});
  expect_f32(run1("Ceil", {f32({3}, {-1.5f, 0.5f, 2.f})}), {3}, {-1.f, 1.f, 2.f});
}

TEST(OpsExtraTest, RoundRoundsHalvesToEven) {
  // numpy.round: [0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6] → [0, 2, 2, -0, -2, 2, -3]
  expect_f32(run1("Round", {f32({7}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f})}), {7},
             {0.f, 2.f, 2.f, -0.f, -2.f, 2.f, -3.f});
}

TEST(OpsExtraTest, LeakyReluAndPReluScaleNegativesOnly) {
  expect_f32(run1("LeakyRelu", {f32({3}, {-2.f, 0.f, 3.f})}, {{"alpha", 0.1f}}), {3}, {-0.2f, 0.f, 3.f});
  expect_f32(run1("LeakyRelu", {f32({1}, {-100.f})}), {1}, {-1.f});  // default alpha 0.01
  // Slope per channel [2,1,1] over X [1,2,1,2].
  expect_f32(run1("PRelu", {f32({1, 2, 1, 2}, {-1.f, 1.f, -2.f, 2.f}), f32({2, 1, 1}, {0.5f, 0.25f})}), {1, 2, 1, 2},
             {-0.5f, 1.f, -0.5f, 2.f});
  expect_error(infer_status("PRelu", {f32({2}, {1, 2}), f32({2, 2}, {1, 2, 3, 4})}), StatusCode::kInvalidArgument,
               "does not broadcast to X");
}

TEST(OpsExtraTest, VariadicOpsBroadcastAllInputs) {
  const Tensor a = f32({2, 2}, {1, 5, 3, 2});
  const Tensor b = f32({2}, {4, 0});
  const Tensor c = f32({}, {2.f});
  expect_f32(run1("Max", {a, b, c}), {2, 2}, {4, 5, 4, 2});
  expect_f32(run1("Min", {a, b, c}), {2, 2}, {1, 0, 2, 0});
  expect_f32(run1("Sum", {a, b, c}), {2, 2}, {7, 7, 9, 4});
  expect_f32(run1("Mean", {a, b}), {2, 2}, {2.5f, 2.5f, 3.5f, 1.f});
  expect_ints(run1("Max", {i64({3}, {1, 9, -4})}), DType::kInt64, {3}, {1, 9, -4});
}

// --- reductions -----------------------------------------------------------------------------------

const Tensor kReduceInput = pattern({2, 3, 4}, 1);

TEST(OpsExtraTest, ReduceSumTakesAxesAsAttributeBeforeOpset13) {
  expect_f32(run1("ReduceSum", {kReduceInput}, {{"axes", Ints{1}}}, 12), {2, 1, 4},
             {-2.25f, 3.f, -1.5f, 0.5f, 2.25f, -2.25f, 3.f, -1.5f});
  expect_error(infer_status("ReduceSum", {kReduceInput, i64({1}, {1})}, {}, 12), StatusCode::kInvalidArgument,
               "takes axes as an attribute at opset 12");
}

TEST(OpsExtraTest, ReduceSumTakesAxesAsInputFromOpset13) {
  expect_f32(run1("ReduceSum", {kReduceInput, i64({1}, {-2})}, {}, 13), {2, 1, 4},
             {-2.25f, 3.f, -1.5f, 0.5f, 2.25f, -2.25f, 3.f, -1.5f});
  // No axes reduces everything (numpy: a.sum() = 1.25).
  expect_f32(run1("ReduceSum", {kReduceInput}, {{"keepdims", int64_t{0}}}, 13), {}, {1.25f});
  // noop_with_empty_axes passes the input through.
  Result<Tensor> noop = run1("ReduceSum", {kReduceInput}, {{"noop_with_empty_axes", int64_t{1}}}, 13);
  ASSERT_TRUE(noop.is_ok()) << noop.status().message();
  EXPECT_EQ(noop->shape(), (Shape{2, 3, 4}));
  expect_error(infer_status("ReduceSum", {kReduceInput}, {{"axes", Ints{1}}}, 13), StatusCode::kInvalidArgument,
               "axes is input 1 of ReduceSum from opset 13 on");
}

TEST(OpsExtraTest, ReduceMaxMinProdMatchNumpy) {
  expect_f32(run1("ReduceMax", {kReduceInput}, {{"axes", Ints{0, 2}}, {"keepdims", int64_t{0}}}), {3},
             {0.75f, 1.25f, 1.5f});
  expect_f32(run1("ReduceMin", {kReduceInput}, {{"keepdims", int64_t{0}}}), {}, {-1.5f});
  expect_f32(run1("ReduceProd", {kReduceInput}, {{"axes", Ints{2}}}), {2, 3, 1},
             {0.46875f, 0.46875f, 0.f, 0.15625f, 0.28125f, -0.f});
  expect_ints(run1("ReduceMax", {i64({2, 2}, {3, -1, 7, 2})}, {{"axes", Ints{1}}}), DType::kInt64, {2, 1}, {3, 7});
}

TEST(OpsExtraTest, ArgMaxAndArgMinTakeTheFirstOrLastExtreme) {
  expect_ints(run1("ArgMax", {kReduceInput}, {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}), DType::kInt64, {2, 4},
              {2, 2, 2, 1, 2, 2, 2, 2});
  expect_ints(run1("ArgMin", {kReduceInput}, {{"axis", int64_t{2}}}), DType::kInt64, {2, 3, 1}, {0, 0, 3, 1, 1, 1});
  const Tensor ties = f32({4}, {1, 3, 3, 0});
  expect_ints(run1("ArgMax", {ties}), DType::kInt64, {1}, {1});
  expect_ints(run1("ArgMax", {ties}, {{"select_last_index", int64_t{1}}}), DType::kInt64, {1}, {2});
}

// --- ConvTranspose -------------------------------------------------------------------------------------

TEST(OpsExtraTest, ConvTransposeSpreadsEachInputOverTheKernel) {
  // x = [[1,2],[3,4]], w = ones(2x2). Stride 1: every output sums the inputs
  // whose 2x2 footprint covers it; stride 2: each input fills its own block.
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  expect_f32(run1("ConvTranspose", {x, w}), {1, 1, 3, 3}, {1, 3, 2, 4, 10, 6, 3, 7, 4});
  expect_f32(run1("ConvTranspose", {x, w}, {{"strides", Ints{2, 2}}}), {1, 1, 4, 4},
             {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(OpsExtraTest, ConvTransposeWithGroupsPadsAndOutputPaddingMatchesNumpy) {
  const Tensor x = pattern({1, 4, 3, 3}, 0);
  const Tensor w = pattern({4, 1, 3, 3}, 5);
  const Tensor b = f32({2}, {0.5f, -0.25f});
  // (3 - 1) * 2 + 1 + 3 - 1 - 1 = 6 per spatial dim.
  expect_f32(
      run1(
          "ConvTranspose", {x, w, b},
          {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{2}}, {"output_padding", Ints{1, 1}}}),
      {1, 2, 6, 6},
      {-0.1875f, 3.5625f,  0.625f,  3.5625f,  -0.1875f, 4.3125f, 0.875f,   1.1875f, -2.375f,  0.375f,   0.875f,
       -0.1875f, 0.625f,   -0.5f,   0.625f,   -1.3125f, 0.625f,  -0.0625f, -2.375f, 0.375f,   5.75f,    0.375f,
       -2.375f,  1.625f,   0.625f,  -1.3125f, 0.625f,   -0.5f,   0.625f,   -0.375f, 3.125f,   0.125f,   -1.25f,
       1.125f,   2.5f,     -0.125f, -1.125f,  -0.25f,   1.875f,  -0.75f,   -1.625f, 1.f,      0.625f,   2.5625f,
       -1.5f,    -3.3125f, 1.25f,   0.5f,     1.375f,   -0.125f, -2.125f,  1.f,     0.875f,   -0.875f,  -0.875f,
       -4.5f,    1.875f,   4.25f,   -1.875f,  0.f,      -2.625f, 1.625f,   0.375f,  -1.3125f, -0.6875f, -1.125f,
       2.375f,   -0.875f,  -0.625f, -0.375f,  -1.1875f, -0.8125f});
}

TEST(OpsExtraTest, ConvTransposeDerivesPadsFromOutputShapeAndAutoPad) {
  const Shape x{1, 1, 3, 3};
  const Shape w{1, 2, 3, 3};
  // SAME_UPPER: output = input * stride = 6; total pad = 2*2 + 3 - 6 = 1,
  // which goes to the end for SAME_UPPER and to the start otherwise.
  Attributes same_upper;
  same_upper.set("strides", Ints{2, 2});
  same_upper.set("auto_pad", std::string("SAME_UPPER"));
  auto g = conv_transpose_geometry(same_upper, x, w);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->out, (Ints{6, 6}));
  EXPECT_EQ(g->pad_begin, (Ints{0, 0}));
  EXPECT_EQ(g->pad_end, (Ints{1, 1}));
  EXPECT_EQ(g->out_channels, 2);
  Attributes with_shape;
  with_shape.set("strides", Ints{2, 2});
  with_shape.set("output_shape", Ints{5, 6});
  g = conv_transpose_geometry(with_shape, x, w);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->out, (Ints{5, 6}));
  EXPECT_EQ(g->pad_begin, (Ints{1, 1}));  // totals 2 and 1, the larger half first
  EXPECT_EQ(g->pad_end, (Ints{1, 0}));
  // The kernel uses the same geometry: output_shape [5,6] runs and keeps its shape.
  Result<Tensor> r =
      run1("ConvTranspose", {pattern(x, 0), pattern(w, 3)}, {{"strides", Ints{2, 2}}, {"output_shape", Ints{5, 6}}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->shape(), (Shape{1, 2, 5, 6}));
}

TEST(OpsExtraTest, ConvTransposeOutputShapeCropsOrExtendsTheFullResult) {
  // Full result of x = [1, 2, 3], w = [1, -1], stride 2: [1, -1, 2, -2, 3, -3] (6).
  // output_shape 5: total pad 1, at the start → [-1, 2, -2, 3, -3].
  // output_shape 7: total pad -1, which the ONNX reference halves rounding
  // down (begin 0, end -1): the output grows by one zero at the end.
  const Tensor x = f32({1, 1, 3}, {1, 2, 3});
  const Tensor w = f32({1, 1, 2}, {1, -1});
  expect_f32(run1("ConvTranspose", {x, w}, {{"strides", Ints{2}}, {"output_shape", Ints{5}}}), {1, 1, 5},
             {-1, 2, -2, 3, -3});
  expect_f32(run1("ConvTranspose", {x, w}, {{"strides", Ints{2}}, {"output_shape", Ints{7}}}), {1, 1, 7},
             {1, -1, 2, -2, 3, -3, 0});
}

TEST(OpsExtraTest, ConvTransposeRunsOneDimensional) {
  // x = [1, 2, 3], w = [1, -1], stride 2 → [1, -1, 2, -2, 3, -3].
  expect_f32(run1("ConvTranspose", {f32({1, 1, 3}, {1, 2, 3}), f32({1, 1, 2}, {1, -1})}, {{"strides", Ints{2}}}),
             {1, 1, 6}, {1, -1, 2, -2, 3, -3});
}

TEST(OpsExtraTest, ConvTransposeRefusesMismatchedChannels) {
  expect_error(infer_status("ConvTranspose", {pattern({1, 3, 2, 2}, 0), pattern({2, 1, 2, 2}, 0)}),
               StatusCode::kInvalidArgument, "node 'n' (ConvTranspose): input has 3 channels");
}

}  // namespace
}  // namespace hetsched
