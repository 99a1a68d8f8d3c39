// Shape inference of the data-movement ops (graph/ops_tensor.cc): the shapes
// each attribute form gives, and the error each malformed node gives.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "graph/builder.h"
#include "graph/op_schema.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

TensorType f32(Shape shape) { return {DType::kFloat32, std::move(shape)}; }

// Builds `b` at `opset` with `y` as the graph output and returns y's inferred type.
Result<TensorType> infer(GraphBuilder& b, ValueId y, int opset = 17) {
  b.raw().set_opset(opset);
  b.output(y);
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  return g.value(y).type;
}

// The inferred shape, or a test failure carrying the error.
Shape shape_of(GraphBuilder& b, ValueId y, int opset = 17) {
  Result<TensorType> t = infer(b, y, opset);
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return t.is_ok() ? t->shape : Shape{-99};
}

// Expects inference to fail with `code` and a message holding every part of `parts`.
void expect_error(GraphBuilder& b, ValueId y, StatusCode code, std::initializer_list<std::string> parts,
                  int opset = 17) {
  Result<TensorType> t = infer(b, y, opset);
  ASSERT_FALSE(t.is_ok()) << "inferred " << t->to_string();
  EXPECT_EQ(t.status().code(), code) << t.status().message();
  for (const std::string& part : parts)
    EXPECT_NE(t.status().message().find(part), std::string::npos)
        << "missing '" << part << "' in: " << t.status().message();
}

// --- registration -------------------------------------------------------------

TEST(TensorOpsTest, RegistersEveryOpWithItsComputeFlag) {
  for (const char* op : {"Transpose", "Concat", "Slice", "Gather", "GatherElements", "Resize"}) {
    const OpSchema* s = find_op_schema(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_TRUE(s->is_compute) << op;
  }
  for (const char* op : {"Reshape", "Flatten", "Identity", "Squeeze", "Unsqueeze"}) {
    const OpSchema* s = find_op_schema(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_FALSE(s->is_compute) << op;
  }
}

// --- Transpose -----------------------------------------------------------------

TEST(TransposeShapeTest, ReversesDimsWithoutPerm) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({2, 3, 4}))});
  EXPECT_EQ(shape_of(b, y), (Shape{4, 3, 2}));
}

TEST(TransposeShapeTest, AppliesPerm) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({1, 3, 8, 5}))}, {{"perm", Ints{0, 2, 3, 1}}});
  EXPECT_EQ(shape_of(b, y), (Shape{1, 8, 5, 3}));
}

TEST(TransposeShapeTest, KeepsDtype) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", {DType::kUInt8, {2, 5}})});
  Result<TensorType> t = infer(b, y);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(*t, (TensorType{DType::kUInt8, {5, 2}}));
}

TEST(TransposeShapeTest, RejectsRepeatedAxisInPerm) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({2, 3, 4}))}, {{"perm", Ints{0, 0, 1}}}, "t");
  expect_error(b, y, StatusCode::kInvalidArgument,
               {"node 't' (Transpose)", "perm [0,0,1]", "not a permutation of 0..2"});
}

TEST(TransposeShapeTest, RejectsPermOfWrongLength) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({2, 3, 4}))}, {{"perm", Ints{1, 0}}}, "t");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 't' (Transpose)", "perm [1,0]", "f32[2,3,4]"});
}

TEST(TransposeShapeTest, RejectsPermAxisOutOfRange) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({2, 3}))}, {{"perm", Ints{0, 2}}}, "t");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 't' (Transpose)", "perm [0,2]"});
}

// --- Reshape -------------------------------------------------------------------

TEST(ReshapeShapeTest, CopiesZeroAndInfersMinusOne) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({2, 3, 4})), b.constant_i64("s", {2}, {0, -1})});
  EXPECT_EQ(shape_of(b, y), (Shape{2, 12}));
}

TEST(ReshapeShapeTest, InfersLeadingMinusOne) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({2, 3, 4})), b.constant_i64("s", {3}, {-1, 2, 2})});
  EXPECT_EQ(shape_of(b, y), (Shape{6, 2, 2}));
}

TEST(ReshapeShapeTest, KeepsZeroAsZeroUnderAllowzero) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Reshape", {b.input("x", f32({0, 6})), b.constant_i64("s", {3}, {0, 2, 3})}, {{"allowzero", int64_t{1}}});
  EXPECT_EQ(shape_of(b, y), (Shape{0, 2, 3}));
}

TEST(ReshapeShapeTest, ZeroCopiesInputDimWithoutAllowzero) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({4, 6})), b.constant_i64("s", {3}, {0, 2, 3})});
  EXPECT_EQ(shape_of(b, y), (Shape{4, 2, 3}));
}

TEST(ReshapeShapeTest, ZeroIsARealZeroUnderAllowzero) {
  GraphBuilder b("g");
  // The same shape as above, but now it asks for 0 elements from 24.
  ValueId y = b.op("Reshape", {b.input("x", f32({4, 6})), b.constant_i64("s", {3}, {0, 2, 3})},
                   {{"allowzero", int64_t{1}}}, "r");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'r' (Reshape)", "f32[4,6]", "[0,2,3]"});
}

TEST(ReshapeShapeTest, RejectsShapeComputedAtRunTime) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({2, 3})), b.input("s", {DType::kInt64, {2}})}, {}, "r");
  expect_error(b, y, StatusCode::kInvalidArgument,
               {"node 'r' (Reshape): Reshape's shape must be a constant (dynamic reshape is not supported)"});
}

TEST(ReshapeShapeTest, RejectsElementCountMismatchNamingBothShapes) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({2, 3, 4})), b.constant_i64("s", {2}, {5, 5})}, {}, "r");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'r' (Reshape)", "f32[2,3,4]", "[5,5]", "24", "25"});
}

TEST(ReshapeShapeTest, RejectsMinusOneThatDoesNotDivide) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({2, 3, 4})), b.constant_i64("s", {2}, {5, -1})}, {}, "r");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'r' (Reshape)", "f32[2,3,4]", "[5,-1]"});
}

TEST(ReshapeShapeTest, RejectsTwoMinusOnes) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({2, 3, 4})), b.constant_i64("s", {3}, {-1, 2, -1})}, {}, "r");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'r' (Reshape)", "more than one -1"});
}

TEST(ReshapeShapeTest, RejectsZeroBeyondInputRank) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({6})), b.constant_i64("s", {2}, {6, 0})}, {}, "r");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'r' (Reshape)", "dim 1 is 0", "rank 1"});
}

// --- Flatten, Identity ------------------------------------------------------------

TEST(FlattenShapeTest, SplitsAtAxis) {
  struct Case {
    int64_t axis;
    Shape want;
  };
  for (const Case& c :
       {Case{1, {2, 60}}, Case{0, {1, 120}}, Case{-1, {24, 5}}, Case{4, {120, 1}}, Case{-4, {1, 120}}}) {
    GraphBuilder b("g");
    ValueId y = b.op("Flatten", {b.input("x", f32({2, 3, 4, 5}))}, {{"axis", c.axis}});
    EXPECT_EQ(shape_of(b, y), c.want) << "axis " << c.axis;
  }
}

TEST(FlattenShapeTest, DefaultsToAxisOne) {
  GraphBuilder b("g");
  ValueId y = b.op("Flatten", {b.input("x", f32({2, 3, 4}))});
  EXPECT_EQ(shape_of(b, y), (Shape{2, 12}));
}

TEST(FlattenShapeTest, RejectsAxisBeyondRank) {
  GraphBuilder b("g");
  ValueId y = b.op("Flatten", {b.input("x", f32({2, 3}))}, {{"axis", int64_t{3}}}, "f");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'f' (Flatten)", "axis 3 is out of range [-2, 2]"});
}

TEST(IdentityShapeTest, PassesTypeThrough) {
  GraphBuilder b("g");
  ValueId y = b.op("Identity", {b.input("x", {DType::kInt64, {3, 1}})});
  Result<TensorType> t = infer(b, y);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(*t, (TensorType{DType::kInt64, {3, 1}}));
}

// --- Squeeze, Unsqueeze -----------------------------------------------------------

TEST(SqueezeShapeTest, TakesAxesAttributeBeforeOpset13) {
  GraphBuilder b("g");
  ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3, 1, 4}))}, {{"axes", Ints{0, -2}}});
  EXPECT_EQ(shape_of(b, y, 11), (Shape{3, 4}));
}

TEST(SqueezeShapeTest, TakesAxesInputFromOpset13) {
  GraphBuilder b("g");
  ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3, 1, 4})), b.constant_i64("a", {1}, {-2})});
  EXPECT_EQ(shape_of(b, y, 13), (Shape{1, 3, 4}));
}

TEST(SqueezeShapeTest, DropsEveryUnitDimWithoutAxes) {
  for (int opset : {11, 13}) {
    GraphBuilder b("g");
    ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3, 1, 4, 1}))});
    EXPECT_EQ(shape_of(b, y, opset), (Shape{3, 4})) << "opset " << opset;
  }
}

TEST(SqueezeShapeTest, TreatsEmptyAxesInputAsNoAxes) {
  GraphBuilder b("g");
  ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3, 1})), b.constant_i64("a", {0}, {})});
  EXPECT_EQ(shape_of(b, y, 13), (Shape{3}));
}

TEST(SqueezeShapeTest, RejectsAxisWhoseSizeIsNotOne) {
  GraphBuilder b("g");
  ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3})), b.constant_i64("a", {1}, {1})}, {}, "s");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 's' (Squeeze)", "cannot squeeze axis 1", "size is 3"});
}

TEST(SqueezeShapeTest, RejectsAxesAttributeFromOpset13) {
  GraphBuilder b("g");
  ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3}))}, {{"axes", Ints{0}}}, "s");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 's' (Squeeze)", "axes is an input from opset 13"}, 13);
}

TEST(SqueezeShapeTest, RejectsAxesInputBeforeOpset13) {
  GraphBuilder b("g");
  ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3})), b.constant_i64("a", {1}, {0})}, {}, "s");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 's' (Squeeze)", "attribute before opset 13"}, 12);
}

TEST(SqueezeShapeTest, RejectsAxesComputedAtRunTime) {
  GraphBuilder b("g");
  ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3})), b.input("a", {DType::kInt64, {1}})}, {}, "s");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 's' (Squeeze)", "Squeeze's axes must be a constant"});
}

TEST(SqueezeShapeTest, RejectsAxisOutOfRange) {
  GraphBuilder b("g");
  ValueId y = b.op("Squeeze", {b.input("x", f32({1, 3}))}, {{"axes", Ints{2}}}, "s");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 's' (Squeeze)", "axis 2 is out of range"}, 11);
}

TEST(UnsqueezeShapeTest, TakesAxesAttributeBeforeOpset13) {
  GraphBuilder b("g");
  ValueId y = b.op("Unsqueeze", {b.input("x", f32({3, 4}))}, {{"axes", Ints{0, 3}}});
  EXPECT_EQ(shape_of(b, y, 9), (Shape{1, 3, 4, 1}));
}

TEST(UnsqueezeShapeTest, TakesNegativeAxesInputFromOpset13) {
  GraphBuilder b("g");
  // Axes count in the output's rank (4): -1 is 3.
  ValueId y = b.op("Unsqueeze", {b.input("x", f32({3, 4})), b.constant_i64("a", {2}, {-1, 1})});
  EXPECT_EQ(shape_of(b, y, 13), (Shape{3, 1, 4, 1}));
}

TEST(UnsqueezeShapeTest, RejectsRepeatedAxis) {
  GraphBuilder b("g");
  // Output rank 3: -1 is 2 again.
  ValueId y = b.op("Unsqueeze", {b.input("x", f32({3})), b.constant_i64("a", {2}, {2, -1})}, {}, "u");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'u' (Unsqueeze)", "axes [2,-1]", "twice"});
}

TEST(UnsqueezeShapeTest, RejectsMissingAxes) {
  GraphBuilder b("g");
  ValueId y = b.op("Unsqueeze", {b.input("x", f32({3}))}, {}, "u");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'u' (Unsqueeze)", "at least one axis"}, 13);
}

// --- Concat ---------------------------------------------------------------------

TEST(ConcatShapeTest, AddsUpTheAxis) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat", {b.input("a", f32({2, 3})), b.input("b", f32({2, 5})), b.input("c", f32({2, 1}))},
                   {{"axis", int64_t{1}}});
  EXPECT_EQ(shape_of(b, y), (Shape{2, 9}));
}

TEST(ConcatShapeTest, AcceptsNegativeAxisAndOneInput) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat", {b.input("a", f32({2, 3, 4}))}, {{"axis", int64_t{-2}}});
  EXPECT_EQ(shape_of(b, y), (Shape{2, 3, 4}));
  GraphBuilder b2("g");
  ValueId y2 = b2.op("Concat", {b2.input("a", f32({2, 3, 4})), b2.input("b", f32({2, 1, 4}))}, {{"axis", int64_t{-2}}});
  EXPECT_EQ(shape_of(b2, y2), (Shape{2, 4, 4}));
}

TEST(ConcatShapeTest, RejectsDifferentDtypes) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat", {b.input("a", f32({2})), b.input("b", {DType::kInt64, {2}})}, {{"axis", int64_t{0}}}, "c");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'c' (Concat)", "input 1 i64[2]", "different dtypes"});
}

TEST(ConcatShapeTest, RejectsDifferentRanks) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat", {b.input("a", f32({2, 3})), b.input("b", f32({2, 3, 1}))}, {{"axis", int64_t{0}}}, "c");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'c' (Concat)", "different ranks"});
}

TEST(ConcatShapeTest, RejectsOffAxisDimMismatch) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat", {b.input("a", f32({2, 3})), b.input("b", f32({4, 3})), b.input("c", f32({2, 4}))},
                   {{"axis", int64_t{0}}}, "c");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'c' (Concat)", "input 2 f32[2,4]", "dim 1 differs"});
}

TEST(ConcatShapeTest, RejectsMissingAxis) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat", {b.input("a", f32({2}))}, {}, "c");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'c' (Concat)", "missing required attribute 'axis'"});
}

// --- Slice ----------------------------------------------------------------------

TEST(SliceShapeTest, SlicesWithStartsEndsAxesSteps) {
  GraphBuilder b("g");
  ValueId y = b.op(
      "Slice", {b.input("x", f32({10, 20, 30})), b.constant_i64("s", {2}, {1, 2}), b.constant_i64("e", {2}, {9, -1}),
                b.constant_i64("a", {2}, {0, 2}), b.constant_i64("st", {2}, {3, 5})});
  // axis 0: 1,4,7 -> 3; axis 2: 2..28 step 5 -> 2,7,12,17,22,27 -> 6.
  EXPECT_EQ(shape_of(b, y), (Shape{3, 20, 6}));
}

TEST(SliceShapeTest, DefaultsAxesToLeadingDims) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Slice", {b.input("x", f32({10, 20})), b.constant_i64("s", {1}, {2}), b.constant_i64("e", {1}, {5})});
  EXPECT_EQ(shape_of(b, y), (Shape{3, 20}));
}

TEST(SliceShapeTest, ClampsOutOfRangeStartsAndEnds) {
  GraphBuilder b("g");
  ValueId y = b.op("Slice", {b.input("x", f32({10, 20, 4})), b.constant_i64("s", {3}, {-100, 5, 7}),
                             b.constant_i64("e", {3}, {kInt64Max, 1000, 9})});
  // axis 0: [0,10) -> 10; axis 1: [5,20) -> 15; axis 2: start 7 clamps to 4, end 4 -> 0.
  EXPECT_EQ(shape_of(b, y), (Shape{10, 15, 0}));
}

TEST(SliceShapeTest, CountsNegativeSteps) {
  GraphBuilder b("g");
  ValueId y = b.op("Slice", {b.input("x", f32({10, 20, 7})), b.constant_i64("s", {3}, {-1, 100, 5}),
                             b.constant_i64("e", {3}, {kInt64Min, 0, -100}), b.constant_i64("a", {3}, {0, 1, -1}),
                             b.constant_i64("st", {3}, {-1, -3, -2})});
  // axis 0: 9..0 -> 10; axis 1: 19 down to 1 step 3 -> 19,16,...,1 -> 7; axis 2: 5,3,1 -> 3.
  EXPECT_EQ(shape_of(b, y), (Shape{10, 7, 3}));
}

TEST(SliceShapeTest, TakesAttributesBeforeOpset10) {
  GraphBuilder b("g");
  ValueId y = b.op("Slice", {b.input("x", f32({10, 20}))},
                   {{"starts", Ints{-5}}, {"ends", Ints{kInt64Max}}, {"axes", Ints{1}}});
  EXPECT_EQ(shape_of(b, y, 9), (Shape{10, 5}));
}

TEST(SliceShapeTest, AcceptsI32Starts) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Slice", {b.input("x", f32({10})), b.constant("s", Tensor::from_vector<int32_t>(DType::kInt32, {1}, {2})),
                     b.constant("e", Tensor::from_vector<int32_t>(DType::kInt32, {1}, {-2}))});
  EXPECT_EQ(shape_of(b, y), (Shape{6}));
}

TEST(SliceShapeTest, RejectsZeroStep) {
  GraphBuilder b("g");
  ValueId y = b.op("Slice",
                   {b.input("x", f32({10})), b.constant_i64("s", {1}, {0}), b.constant_i64("e", {1}, {5}),
                    b.constant_i64("a", {1}, {0}), b.constant_i64("st", {1}, {0})},
                   {}, "sl");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'sl' (Slice)", "steps [0] has a 0"});
}

TEST(SliceShapeTest, RejectsStartsComputedAtRunTime) {
  GraphBuilder b("g");
  ValueId y = b.op(
      "Slice", {b.input("x", f32({10})), b.input("s", {DType::kInt64, {1}}), b.constant_i64("e", {1}, {5})}, {}, "sl");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'sl' (Slice)", "Slice's starts must be a constant"});
}

TEST(SliceShapeTest, RejectsLengthMismatch) {
  GraphBuilder b("g");
  ValueId y = b.op(
      "Slice", {b.input("x", f32({10, 4})), b.constant_i64("s", {2}, {0, 0}), b.constant_i64("e", {1}, {5})}, {}, "sl");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'sl' (Slice)", "starts [0,0] and ends [5] differ in length"});
}

TEST(SliceShapeTest, RejectsRepeatedAxis) {
  GraphBuilder b("g");
  ValueId y = b.op("Slice",
                   {b.input("x", f32({10, 4})), b.constant_i64("s", {2}, {0, 0}), b.constant_i64("e", {2}, {5, 5}),
                    b.constant_i64("a", {2}, {1, -1})},
                   {}, "sl");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'sl' (Slice)", "twice"});
}

TEST(SliceShapeTest, RejectsMissingEndsFromOpset10) {
  GraphBuilder b("g");
  ValueId y = b.op("Slice", {b.input("x", f32({10}))}, {{"starts", Ints{0}}, {"ends", Ints{5}}}, "sl");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'sl' (Slice)", "needs starts and ends inputs"}, 10);
}

// --- Gather, GatherElements -------------------------------------------------------------

TEST(GatherShapeTest, ReplacesAxisWithIndicesShape) {
  struct Case {
    int64_t axis;
    Shape want;
  };
  for (const Case& c : {Case{0, {2, 2, 3, 4, 5}}, Case{1, {2, 2, 2, 4, 5}}, Case{-1, {2, 3, 4, 2, 2}}}) {
    GraphBuilder b("g");
    ValueId y =
        b.op("Gather", {b.input("x", f32({2, 3, 4, 5})), b.input("i", {DType::kInt64, {2, 2}})}, {{"axis", c.axis}});
    EXPECT_EQ(shape_of(b, y), c.want) << "axis " << c.axis;
  }
}

TEST(GatherShapeTest, ScalarIndexDropsTheAxis) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Gather", {b.input("x", {DType::kInt64, {3, 4}}), b.constant_i64("i", {}, {-1})}, {{"axis", int64_t{1}}});
  Result<TensorType> t = infer(b, y);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(*t, (TensorType{DType::kInt64, {3}}));
}

TEST(GatherShapeTest, AcceptsI32Indices) {
  GraphBuilder b("g");
  ValueId y = b.op("Gather", {b.input("x", f32({5, 2})), b.input("i", {DType::kInt32, {3}})});
  EXPECT_EQ(shape_of(b, y), (Shape{3, 2}));
}

TEST(GatherShapeTest, RejectsConstantIndexOutOfRange) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Gather", {b.input("x", f32({5, 3})), b.constant_i64("i", {3}, {0, -3, 3})}, {{"axis", int64_t{1}}}, "ga");
  expect_error(b, y, StatusCode::kInvalidArgument,
               {"node 'ga' (Gather)", "index 3 (element 2 of the indices) is out of range [-3, 2]", "axis 1"});
}

TEST(GatherShapeTest, RejectsNegativeConstantIndexOutOfRange) {
  GraphBuilder b("g");
  ValueId y = b.op("Gather", {b.input("x", f32({5, 3})), b.constant_i64("i", {1}, {-6})}, {}, "ga");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'ga' (Gather)", "index -6", "[-5, 4]"});
}

TEST(GatherShapeTest, RejectsFloatIndices) {
  GraphBuilder b("g");
  ValueId y = b.op("Gather", {b.input("x", f32({5})), b.input("i", f32({1}))}, {}, "ga");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'ga' (Gather)", "indices must be i64 or i32, got f32[1]"});
}

TEST(GatherShapeTest, RejectsAxisOutOfRange) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Gather", {b.input("x", f32({5})), b.input("i", {DType::kInt64, {1}})}, {{"axis", int64_t{1}}}, "ga");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'ga' (Gather)", "axis 1 is out of range"});
}

TEST(GatherElementsShapeTest, OutputTakesIndicesShape) {
  for (int64_t axis : {0, 1, -1}) {
    GraphBuilder b("g");
    ValueId y =
        b.op("GatherElements", {b.input("x", f32({4, 5})), b.input("i", {DType::kInt32, {2, 3}})}, {{"axis", axis}});
    EXPECT_EQ(shape_of(b, y), (Shape{2, 3})) << "axis " << axis;
  }
}

TEST(GatherElementsShapeTest, AllowsIndicesLongerThanDataOnTheAxis) {
  GraphBuilder b("g");
  ValueId y = b.op("GatherElements", {b.input("x", f32({2, 3})), b.input("i", {DType::kInt64, {7, 3}})});
  EXPECT_EQ(shape_of(b, y), (Shape{7, 3}));
}

TEST(GatherElementsShapeTest, RejectsRankMismatch) {
  GraphBuilder b("g");
  ValueId y = b.op("GatherElements", {b.input("x", f32({4, 5})), b.input("i", {DType::kInt64, {4}})}, {}, "ge");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'ge' (GatherElements)", "must have the rank of data"});
}

TEST(GatherElementsShapeTest, RejectsIndicesLargerThanDataOffTheAxis) {
  GraphBuilder b("g");
  ValueId y = b.op("GatherElements", {b.input("x", f32({4, 5})), b.input("i", {DType::kInt64, {2, 6}})}, {}, "ge");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'ge' (GatherElements)", "larger than data", "dim 1"});
}

TEST(GatherElementsShapeTest, RejectsConstantIndexOutOfRange) {
  GraphBuilder b("g");
  ValueId y = b.op("GatherElements", {b.input("x", f32({4, 5})), b.constant_i64("i", {1, 2}, {4, 0})}, {}, "ge");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'ge' (GatherElements)", "index 4", "[-4, 3]"});
}

// --- Resize ---------------------------------------------------------------------

ValueId no_value() { return kNoValue; }

TEST(ResizeShapeTest, ScalesFloorEachDim) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 3, 5, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 0.6f})});
  // 5 * 2 = 10; floor(4 * 0.6) = 2.
  EXPECT_EQ(shape_of(b, y), (Shape{1, 3, 10, 2}));
}

TEST(ResizeShapeTest, TakesSizes) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Resize", {b.input("x", f32({2, 3, 5, 4})), no_value(), no_value(), b.constant_i64("z", {4}, {2, 3, 7, 9})},
           {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}});
  EXPECT_EQ(shape_of(b, y), (Shape{2, 3, 7, 9}));
}

TEST(ResizeShapeTest, TreatsEmptyRoiAndScalesAsAbsentInOpset11) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Resize",
           {b.input("x", f32({1, 1, 4, 4})), b.constant_f32("roi", {0}, {}), b.constant_f32("s", {0}, {}),
            b.constant_i64("z", {4}, {1, 1, 3, 8})},
           {{"nearest_mode", std::string("floor")}, {"coordinate_transformation_mode", std::string("asymmetric")}});
  EXPECT_EQ(shape_of(b, y, 11), (Shape{1, 1, 3, 8}));
}

TEST(ResizeShapeTest, TakesScalesAsSecondInputInOpset10) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 2, 3, 4})), b.constant_f32("s", {4}, {1, 1, 2, 3})});
  EXPECT_EQ(shape_of(b, y, 10), (Shape{1, 2, 6, 12}));
}

TEST(ResizeShapeTest, RejectsBothScalesAndSizes) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize",
                   {b.input("x", f32({1, 1, 4, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2}),
                    b.constant_i64("z", {4}, {1, 1, 8, 8})},
                   {}, "rs");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'rs' (Resize)", "exactly one of scales or sizes, got both"});
}

TEST(ResizeShapeTest, RejectsNeitherScalesNorSizes) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), b.constant_f32("s", {0}, {})}, {}, "rs");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'rs' (Resize)", "got neither"});
}

TEST(ResizeShapeTest, RejectsScalesComputedAtRunTime) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), b.input("s", f32({4}))}, {}, "rs");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'rs' (Resize)", "Resize's scales must be a constant"});
}

TEST(ResizeShapeTest, RejectsSizesComputedAtRunTime) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), no_value(), b.input("z", {DType::kInt64, {4}})}, {},
           "rs");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'rs' (Resize)", "Resize's sizes must be a constant"});
}

TEST(ResizeShapeTest, RejectsAnUnknownModeAndABadExcludeOutside) {
  {
    GraphBuilder b("g");
    ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})},
                     {{"mode", std::string("area")}}, "rs");
    expect_error(b, y, StatusCode::kInvalidArgument,
                 {"node 'rs' (Resize)", "attribute 'mode' = 'area' is not supported (accepted: nearest, linear, cubic)"});
  }
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})},
                   {{"mode", std::string("cubic")}, {"exclude_outside", int64_t{2}}}, "rs");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'rs' (Resize)", "'exclude_outside' must be 0 or 1"});
}

TEST(ResizeShapeTest, RejectsCropAndResizeAsUnsupported) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})},
                   {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}}, "rs");
  expect_error(b, y, StatusCode::kUnsupported,
               {"node 'rs' (Resize)", "attribute 'coordinate_transformation_mode' = 'tf_crop_and_resize'",
                "accepted: half_pixel, asymmetric, align_corners, pytorch_half_pixel, tf_half_pixel_for_nearest"});
}

TEST(ResizeShapeTest, RejectsUnknownNearestMode) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})},
                   {{"nearest_mode", std::string("closest")}}, "rs");
  expect_error(b, y, StatusCode::kInvalidArgument,
               {"node 'rs' (Resize)", "attribute 'nearest_mode' = 'closest'",
                "accepted: round_prefer_floor, round_prefer_ceil, floor, ceil"});
}

TEST(ResizeShapeTest, ResizesAnyRankAndAnyDim) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 4, 4})), no_value(), b.constant_f32("s", {3}, {1, 2, 2})}, {}, "rs");
  ValueId z =
      b.op("Resize", {b.input("w", f32({1, 2, 4, 4})), no_value(), b.constant_f32("t", {4}, {1, 2, 1, 1})}, {}, "rc");
  b.output(y);
  b.output(z);
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->value(y).type.shape, (Shape{1, 8, 8}));
  EXPECT_EQ(g->value(z).type.shape, (Shape{1, 4, 4, 4}));
}

TEST(ResizeShapeTest, ScalesOrSizesPerNamedAxisFromOpset18) {
  GraphBuilder b("g");
  b.raw().set_opset(18);
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4, 6})), no_value(), b.constant_f32("s", {2}, {0.5f, 2})},
                   {{"axes", std::vector<int64_t>{3, 2}}}, "rs");
  b.output(y);
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->value(y).type.shape, (Shape{1, 1, 8, 3}));
  GraphBuilder bad("g");
  ValueId z = bad.op("Resize", {bad.input("x", f32({1, 1, 4, 6})), no_value(), bad.constant_f32("s", {4}, {1, 1, 2, 2})},
                     {{"axes", std::vector<int64_t>{2, 3}}}, "rs");
  expect_error(bad, z, StatusCode::kInvalidArgument, {"node 'rs' (Resize)", "scales must be 2 f32 values",
                                                      "one per entry of attribute 'axes'"},
               18);
}

TEST(ResizeShapeTest, RejectsScaleThatEmptiesADim) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 0.2f, 1})},
                   {}, "rs");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'rs' (Resize)", "resizes dim 2", "to 0"});
}

TEST(ResizeShapeTest, RejectsWrongInputCountInOpset10) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Resize", {b.input("x", f32({1, 1, 4, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})}, {}, "rs");
  expect_error(b, y, StatusCode::kInvalidArgument, {"node 'rs' (Resize)", "(X, scales) before opset 11"}, 10);
}

}  // namespace
}  // namespace hetsched
