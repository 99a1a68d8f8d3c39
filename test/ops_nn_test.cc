// Shape inference of the NN ops (graph/ops_nn.cc). Expected shapes are
// hand-derived from the ONNX output-size formulas; each test states the sum.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/builder.h"
#include "graph/op_schema.h"

namespace hetsched {
namespace {

using AttrList = std::initializer_list<std::pair<std::string, Attribute>>;
using Ints = std::vector<int64_t>;

TensorType f32(Shape shape) { return {DType::kFloat32, std::move(shape)}; }

// Builds one node "n" of `op` with `num_outputs` outputs over graph inputs
// of `types` at `opset`, and returns the type of its first output or the
// error of build().
Result<TensorType> infer(const std::string& op, const std::vector<TensorType>& types, AttrList attrs = {},
                         int opset = 17, int num_outputs = 1) {
  GraphBuilder b("g");
  b.raw().set_opset(opset);
  std::vector<ValueId> ids;
  for (size_t i = 0; i < types.size(); ++i) ids.push_back(b.input("in" + std::to_string(i), types[i]));
  for (ValueId out : b.op_multi(op, ids, num_outputs, attrs, "n")) b.output(out);
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  return g.value(g.outputs()[0]).type;
}

void expect_shape(const Result<TensorType>& r, const Shape& want) {
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(*r, f32(want)) << r->to_string() << " vs " << f32(want).to_string();
}

void expect_error(const Result<TensorType>& r, const std::vector<std::string>& parts,
                  StatusCode code = StatusCode::kInvalidArgument) {
  ASSERT_FALSE(r.is_ok()) << "inferred " << r->to_string();
  EXPECT_EQ(r.status().code(), code) << r.status().message();
  for (const std::string& part : parts)
    EXPECT_NE(r.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << r.status().message();
}

TEST(NnOpsTest, EveryOpIsRegisteredAsCompute) {
  for (const char* op : {"Conv", "BatchNormalization", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool",
                         "Softmax", "ReduceMean"}) {
    const OpSchema* schema = find_op_schema(op);
    ASSERT_NE(schema, nullptr) << op;
    EXPECT_TRUE(schema->is_compute) << op;
  }
}

// ---- Conv -------------------------------------------------------------------

TEST(ConvOpTest, InfersValidConvShape) {
  // (8 - 3) / 1 + 1 = 6
  expect_shape(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}), {1, 4, 6, 6});
}

TEST(ConvOpTest, AppliesStridesPadsAndDilations) {
  // H: dilated kernel 5, (10 + 1 + 2 - 5) / 2 + 1 = 5; W: (9 + 0 + 1 - 2) / 3 + 1 = 3
  expect_shape(infer("Conv", {f32({2, 3, 10, 9}), f32({5, 3, 3, 2})},
                     {{"strides", Ints{2, 3}}, {"pads", Ints{1, 0, 2, 1}}, {"dilations", Ints{2, 1}}}),
               {2, 5, 5, 3});
}

TEST(ConvOpTest, AcceptsGroupsAndDepthwise) {
  expect_shape(infer("Conv", {f32({1, 4, 5, 5}), f32({6, 2, 3, 3})}, {{"group", int64_t{2}}}), {1, 6, 3, 3});
  expect_shape(
      infer("Conv", {f32({1, 8, 7, 7}), f32({8, 1, 3, 3})}, {{"group", int64_t{8}}, {"pads", Ints{1, 1, 1, 1}}}),
      {1, 8, 7, 7});
}

TEST(ConvOpTest, AutoPadSameKeepsCeilOfInputOverStride) {
  // ceil(7 / 2) = 4 for both SAME modes; VALID: (7 - 3) / 2 + 1 = 3
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"})
    expect_shape(infer("Conv", {f32({1, 1, 7, 7}), f32({1, 1, 3, 3})},
                       {{"auto_pad", std::string(mode)}, {"strides", Ints{2, 2}}}),
                 {1, 1, 4, 4});
  expect_shape(infer("Conv", {f32({1, 1, 7, 7}), f32({1, 1, 3, 3})},
                     {{"auto_pad", std::string("VALID")}, {"strides", Ints{2, 2}}}),
               {1, 1, 3, 3});
}

TEST(ConvOpTest, InfersOneDimensionalConv) {
  // (10 - 3) / 2 + 1 = 4
  expect_shape(infer("Conv", {f32({2, 3, 10}), f32({5, 3, 3})}, {{"strides", Ints{2}}}), {2, 5, 4});
}

TEST(ConvOpTest, AcceptsMatchingKernelShapeAndBias) {
  expect_shape(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3}), f32({4})}, {{"kernel_shape", Ints{3, 3}}}),
               {1, 4, 6, 6});
}

TEST(ConvOpTest, RejectsWeightOfWrongRank) {
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({3, 3})}),
               {"node 'n' (Conv)", "weight must be 4-D for 2-D conv, got f32[3,3]"});
}

TEST(ConvOpTest, RejectsChannelMismatch) {
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 2, 3, 3})}),
               {"node 'n' (Conv)", "input has 3 channels, but weight f32[4,2,3,3] with group 1 expects 2"});
}

TEST(ConvOpTest, RejectsOutputChannelsNotDivisibleByGroup) {
  expect_error(infer("Conv", {f32({1, 4, 8, 8}), f32({6, 1, 3, 3})}, {{"group", int64_t{4}}}),
               {"node 'n' (Conv)", "weight has 6 output channels, which is not divisible by group 4"});
}

TEST(ConvOpTest, RejectsNonPositiveGroup) {
  expect_error(infer("Conv", {f32({1, 4, 8, 8}), f32({6, 4, 3, 3})}, {{"group", int64_t{0}}}),
               {"attribute 'group' must be >= 1, got 0"});
}

TEST(ConvOpTest, RejectsBadAttributeLengths) {
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}, {{"pads", Ints{1, 1}}}),
               {"node 'n' (Conv)", "attribute 'pads' has 2 values, expected 4"});
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}, {{"strides", Ints{1, 1, 1}}}),
               {"node 'n' (Conv)", "attribute 'strides' has 3 values, expected 2"});
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}, {{"dilations", Ints{1}}}),
               {"attribute 'dilations' has 1 values, expected 2"});
}

TEST(ConvOpTest, RejectsZeroStride) {
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}, {{"strides", Ints{1, 0}}}),
               {"attribute 'strides' must have values >= 1, got [1,0]"});
}

TEST(ConvOpTest, RejectsKernelShapeThatDisagreesWithWeight) {
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}, {{"kernel_shape", Ints{5, 5}}}),
               {"attribute 'kernel_shape' [5,5] does not match the weight's spatial dims [3,3]"});
}

TEST(ConvOpTest, RejectsBiasOfWrongSize) {
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3}), f32({3})}),
               {"node 'n' (Conv)", "bias B must be f32[4], got f32[3]"});
}

TEST(ConvOpTest, RejectsUnknownAutoPadAndPadsWithAutoPad) {
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})}, {{"auto_pad", std::string("SAME")}}),
               {"attribute 'auto_pad' is 'SAME', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"});
  expect_error(infer("Conv", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3})},
                     {{"auto_pad", std::string("VALID")}, {"pads", Ints{1, 1, 1, 1}}}),
               {"attribute 'pads' [1,1,1,1] cannot be combined with auto_pad VALID"});
}

TEST(ConvOpTest, RejectsWindowLargerThanPaddedInput) {
  expect_error(infer("Conv", {f32({1, 1, 2, 2}), f32({1, 1, 3, 3})}),
               {"node 'n' (Conv)", "window of size 3 (kernel 3, dilation 1) is larger than spatial dim 0"});
}

TEST(ConvOpTest, RejectsInputOfWrongRank) {
  expect_error(infer("Conv", {f32({3, 8}), f32({4, 3})}), {"input X must be at least 3-D", "f32[3,8]"});
  expect_error(infer("Conv", {f32({1, 1, 4, 4, 4}), f32({1, 1, 3, 3})}), {"node 'n' (Conv)", "weight must be 5-D"});
}

TEST(ConvOpTest, ThreeSpatialDimsGiveAVolume) {
  expect_shape(infer("Conv", {f32({1, 2, 4, 6, 8}), f32({5, 2, 3, 3, 3})}, {{"pads", Ints{1, 0, 1, 1, 0, 1}}}),
               {1, 5, 4, 4, 8});
}

// ---- BatchNormalization -----------------------------------------------------

TEST(BatchNormOpTest, KeepsInputShape) {
  expect_shape(infer("BatchNormalization", {f32({2, 3, 4, 4}), f32({3}), f32({3}), f32({3}), f32({3})}), {2, 3, 4, 4});
  expect_shape(infer("BatchNormalization", {f32({5, 3}), f32({3}), f32({3}), f32({3}), f32({3})}), {5, 3});
}

TEST(BatchNormOpTest, RejectsTrainingOutputs) {
  expect_error(infer("BatchNormalization", {f32({2, 3, 4, 4}), f32({3}), f32({3}), f32({3}), f32({3})}, {}, 17, 3),
               {"node 'n' (BatchNormalization)", "training mode is unsupported"}, StatusCode::kUnsupported);
  expect_error(infer("BatchNormalization", {f32({2, 3, 4, 4}), f32({3}), f32({3}), f32({3}), f32({3})},
                     {{"training_mode", int64_t{1}}}),
               {"training mode is unsupported"}, StatusCode::kUnsupported);
}

TEST(BatchNormOpTest, RejectsParameterOfWrongShape) {
  expect_error(
      infer("BatchNormalization", {f32({2, 3, 4, 4}), f32({3}), f32({3}), f32({4}), f32({3})}),
      {"node 'n' (BatchNormalization)", "input input_mean must be f32[3] (one value per channel), got f32[4]"});
}

TEST(BatchNormOpTest, RejectsMissingInputs) {
  expect_error(infer("BatchNormalization", {f32({2, 3}), f32({3}), f32({3}), f32({3})}), {"takes 5 inputs, got 4"});
}

// ---- MatMul -----------------------------------------------------------------

TEST(MatMulOpTest, MultipliesMatrices) { expect_shape(infer("MatMul", {f32({3, 4}), f32({4, 5})}), {3, 5}); }

TEST(MatMulOpTest, BroadcastsBatchDims) {
  // batch [2,1] x [5] -> [2,5]
  expect_shape(infer("MatMul", {f32({2, 1, 3, 4}), f32({5, 4, 6})}), {2, 5, 3, 6});
}

TEST(MatMulOpTest, DropsDimsAddedForOneDimensionalOperands) {
  expect_shape(infer("MatMul", {f32({4}), f32({2, 4, 5})}), {2, 5});
  expect_shape(infer("MatMul", {f32({2, 3, 4}), f32({4})}), {2, 3});
  expect_shape(infer("MatMul", {f32({4}), f32({4})}), {});
}

TEST(MatMulOpTest, RejectsInnerDimensionMismatch) {
  expect_error(infer("MatMul", {f32({3, 4}), f32({5, 6})}),
               {"node 'n' (MatMul)", "inner dimensions differ: A f32[3,4] has K=4, B f32[5,6] has K=5"});
}

TEST(MatMulOpTest, RejectsBatchDimsThatDoNotBroadcast) {
  expect_error(infer("MatMul", {f32({2, 3, 4}), f32({3, 4, 5})}), {"node 'n' (MatMul)", "batch dims do not broadcast"});
}

// ---- Gemm -------------------------------------------------------------------

TEST(GemmOpTest, AppliesTransposes) {
  expect_shape(infer("Gemm", {f32({3, 4}), f32({4, 5})}), {3, 5});
  expect_shape(infer("Gemm", {f32({4, 3}), f32({4, 5})}, {{"transA", int64_t{1}}}), {3, 5});
  expect_shape(infer("Gemm", {f32({3, 4}), f32({5, 4})}, {{"transB", int64_t{1}}}), {3, 5});
  expect_shape(infer("Gemm", {f32({4, 3}), f32({5, 4})}, {{"transA", int64_t{1}}, {"transB", int64_t{1}}}), {3, 5});
}

TEST(GemmOpTest, AcceptsCBroadcastableToOutput) {
  for (const Shape& c : {Shape{}, Shape{5}, Shape{1, 5}, Shape{3, 1}, Shape{3, 5}})
    expect_shape(infer("Gemm", {f32({3, 4}), f32({4, 5}), f32(c)}), {3, 5});
}

TEST(GemmOpTest, RejectsCThatDoesNotBroadcast) {
  expect_error(infer("Gemm", {f32({3, 4}), f32({4, 5}), f32({4, 5})}),
               {"node 'n' (Gemm)", "input C f32[4,5] does not broadcast to the output [3,5]"});
  expect_error(infer("Gemm", {f32({3, 4}), f32({4, 5}), f32({1, 3, 5})}), {"input C f32[1,3,5] does not broadcast"});
}

TEST(GemmOpTest, RejectsInnerDimensionMismatchNamingTranspose) {
  expect_error(infer("Gemm", {f32({3, 4}), f32({4, 5})}, {{"transB", int64_t{1}}}),
               {"node 'n' (Gemm)", "inner dimensions differ", "(transposed) has K=5"});
}

TEST(GemmOpTest, RejectsNonMatrixInputsAndBadFlags) {
  expect_error(infer("Gemm", {f32({3}), f32({3, 5})}), {"inputs must be 2-D", "f32[3]"});
  expect_error(infer("Gemm", {f32({3, 4}), f32({4, 5})}, {{"transA", int64_t{2}}}),
               {"attribute 'transA' must be 0 or 1, got 2"});
}

// ---- Pools ------------------------------------------------------------------

TEST(PoolOpTest, MaxPoolAppliesStridesAndPads) {
  // (5 - 3) / 1 + 1 = 3; (8 + 2 - 3) / 2 + 1 = 4
  expect_shape(infer("MaxPool", {f32({1, 1, 5, 5})}, {{"kernel_shape", Ints{3, 3}}}), {1, 1, 3, 3});
  expect_shape(infer("MaxPool", {f32({1, 2, 8, 8})},
                     {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
               {1, 2, 4, 4});
}

TEST(PoolOpTest, CeilModeRoundsUp) {
  // floor((6 - 3) / 2) + 1 = 2; ceil((6 - 3) / 2) + 1 = 3, and the last window starts at 4 < 6
  expect_shape(infer("MaxPool", {f32({1, 1, 6, 6})}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}),
               {1, 1, 2, 2});
  expect_shape(infer("AveragePool", {f32({1, 1, 6, 6})},
                     {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}),
               {1, 1, 3, 3});
}

TEST(PoolOpTest, CeilModeDropsWindowStartingInEndPadding) {
  // ceil((7 + 2 - 2) / 2) + 1 = 5, but window 4 would start at 4 * 2 = 8 >= 7 + 1: 4 windows
  expect_shape(infer("MaxPool", {f32({1, 1, 7, 7})},
                     {{"kernel_shape", Ints{2, 2}},
                      {"strides", Ints{2, 2}},
                      {"pads", Ints{1, 1, 1, 1}},
                      {"ceil_mode", int64_t{1}}}),
               {1, 1, 4, 4});
}

TEST(PoolOpTest, MaxPoolAppliesDilations) {
  // dilated kernel 5: (7 - 5) + 1 = 3
  expect_shape(infer("MaxPool", {f32({1, 1, 7, 7})}, {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}}),
               {1, 1, 3, 3});
}

TEST(PoolOpTest, AutoPadSameUpperAndOneDimensionalPools) {
  expect_shape(infer("AveragePool", {f32({1, 1, 7, 7})},
                     {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}),
               {1, 1, 4, 4});
  // (10 - 3) / 3 + 1 = 3
  expect_shape(infer("MaxPool", {f32({1, 3, 10})}, {{"kernel_shape", Ints{3}}, {"strides", Ints{3}}}), {1, 3, 3});
}

TEST(PoolOpTest, MaxPoolIndicesAreI64OfTheOutputShape) {
  GraphBuilder b("g");
  const std::vector<ValueId> outs =
      b.op_multi("MaxPool", {b.input("x", f32({1, 1, 5, 5}))}, 2, {{"kernel_shape", Ints{3, 3}}}, "n");
  for (ValueId v : outs) b.output(v);
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->value(outs[1]).type, (TensorType{DType::kInt64, {1, 1, 3, 3}}));
  expect_error(infer("MaxPool", {f32({1, 1, 5, 5})}, {{"kernel_shape", Ints{3, 3}}, {"storage_order", int64_t{2}}}),
               {"node 'n' (MaxPool)", "'storage_order' must be 0 or 1"});
}

TEST(PoolOpTest, RejectsMissingOrMisshapedKernel) {
  expect_error(infer("MaxPool", {f32({1, 1, 5, 5})}),
               {"node 'n' (MaxPool)", "missing required attribute 'kernel_shape'"});
  expect_error(infer("AveragePool", {f32({1, 1, 5, 5})}, {{"kernel_shape", Ints{3}}}),
               {"attribute 'kernel_shape' has 1 values, expected 2"});
}

TEST(PoolOpTest, RejectsPadsAsLargeAsTheWindow) {
  expect_error(infer("MaxPool", {f32({1, 1, 5, 5})}, {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{2, 0, 0, 0}}}),
               {"node 'n' (MaxPool)", "must be smaller than the window size 2 on spatial axis 0"});
}

TEST(PoolOpTest, RejectsBadFlags) {
  expect_error(
      infer("AveragePool", {f32({1, 1, 5, 5})}, {{"kernel_shape", Ints{2, 2}}, {"count_include_pad", int64_t{2}}}),
      {"attribute 'count_include_pad' must be 0 or 1, got 2"});
  expect_error(infer("MaxPool", {f32({1, 1, 5, 5})}, {{"kernel_shape", Ints{2, 2}}, {"ceil_mode", int64_t{-1}}}),
               {"attribute 'ceil_mode' must be 0 or 1, got -1"});
}

TEST(PoolOpTest, GlobalAveragePoolKeepsBatchAndChannels) {
  expect_shape(infer("GlobalAveragePool", {f32({2, 3, 5, 7})}), {2, 3, 1, 1});
  expect_shape(infer("GlobalAveragePool", {f32({2, 3, 5})}), {2, 3, 1});
  expect_error(infer("GlobalAveragePool", {f32({2, 3})}),
               {"node 'n' (GlobalAveragePool)", "input X must be at least 3-D"});
}

// ---- Softmax ----------------------------------------------------------------

TEST(SoftmaxOpTest, KeepsShapeForAnyValidAxis) {
  expect_shape(infer("Softmax", {f32({2, 3, 4})}), {2, 3, 4});
  expect_shape(infer("Softmax", {f32({2, 3, 4})}, {{"axis", int64_t{-3}}}, 13), {2, 3, 4});
  expect_shape(infer("Softmax", {f32({2, 3, 4})}, {{"axis", int64_t{2}}}, 11), {2, 3, 4});
}

TEST(SoftmaxOpTest, RejectsAxisOutOfRange) {
  expect_error(infer("Softmax", {f32({2, 3, 4})}, {{"axis", int64_t{3}}}, 13),
               {"node 'n' (Softmax)", "attribute 'axis': axis 3 is out of range [-3, 2] for rank 3"});
  expect_error(infer("Softmax", {f32({4})}, {}, 11), {"axis 1 is out of range [-1, 0]"});
}

// ---- ReduceMean -------------------------------------------------------------

TEST(ReduceMeanOpTest, KeepdimsOneAndZero) {
  expect_shape(infer("ReduceMean", {f32({2, 3, 4})}, {{"axes", Ints{1}}}), {2, 1, 4});
  expect_shape(infer("ReduceMean", {f32({2, 3, 4})}, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}), {2, 4});
  expect_shape(infer("ReduceMean", {f32({2, 3, 4})}, {{"axes", Ints{-1, 0}}, {"keepdims", int64_t{0}}}), {3});
}

TEST(ReduceMeanOpTest, EmptyAxesReduceAllUnlessNoop) {
  expect_shape(infer("ReduceMean", {f32({2, 3, 4})}), {1, 1, 1});
  expect_shape(infer("ReduceMean", {f32({2, 3, 4})}, {{"keepdims", int64_t{0}}}), {});
  // noop_with_empty_axes comes with the axes input (opset 18).
  expect_shape(infer("ReduceMean", {f32({2, 3, 4})}, {{"noop_with_empty_axes", int64_t{1}}}, 18), {2, 3, 4});
}

TEST(ReduceMeanOpTest, ReadsAxesFromConstantInput) {
  GraphBuilder b("g");
  b.raw().set_opset(18);
  const ValueId x = b.input("x", f32({2, 3, 4}));
  b.output(b.op("ReduceMean", {x, b.constant_i64("axes", {2}, {0, 2})}, {{"keepdims", int64_t{0}}}, "n"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->value(g->outputs()[0]).type, f32({3}));
}

TEST(ReduceMeanOpTest, RejectsComputedAxesInput) {
  expect_error(infer("ReduceMean", {f32({2, 3, 4}), TensorType{DType::kInt64, {1}}}, {}, 18),
               {"node 'n' (ReduceMean)", "input 1 (axes) must be a constant"}, StatusCode::kUnsupported);
}

// Each opset has one form: the attribute up to 17, the input from 18.
TEST(ReduceMeanOpTest, RejectsTheAxesFormOfTheOtherOpsets) {
  for (int opset : {17, 18}) {
    GraphBuilder b("g");
    b.raw().set_opset(opset);
    const ValueId x = b.input("x", f32({2, 3, 4}));
    b.output(b.op("ReduceMean", {x, b.constant_i64("axes", {1}, {0})}, {{"axes", Ints{1}}}, "n"));
    Result<Graph> g = b.build();
    ASSERT_FALSE(g.is_ok());
    EXPECT_NE(g.status().message().find(opset == 17 ? "node 'n' (ReduceMean): takes axes as an attribute at opset 17"
                                                    : "node 'n' (ReduceMean): axes is input 1 of ReduceMean from opset 18"),
              std::string::npos)
        << g.status().message();
  }
}

TEST(ReduceMeanOpTest, RejectsRepeatedOrOutOfRangeAxes) {
  expect_error(infer("ReduceMean", {f32({2, 3, 4})}, {{"axes", Ints{1, -2}}}),
               {"node 'n' (ReduceMean)", "axes [1,-2] name axis 1 twice"});
  expect_error(infer("ReduceMean", {f32({2, 3, 4})}, {{"axes", Ints{3}}}),
               {"axes [3]: axis 3 is out of range [-3, 2] for rank 3"});
}

}  // namespace
}  // namespace hetsched
