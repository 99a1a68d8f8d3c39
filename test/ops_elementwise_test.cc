// Shape inference of the elementwise ops (graph/ops_elementwise.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/builder.h"
#include "graph/op_schema.h"

namespace hetsched {
namespace {

using AttrList = std::initializer_list<std::pair<std::string, Attribute>>;

TensorType f32(Shape shape) { return {DType::kFloat32, std::move(shape)}; }
TensorType i64(Shape shape) { return {DType::kInt64, std::move(shape)}; }

// Builds one node "n" of `op` over graph inputs of `types` at `opset` and
// returns its inferred output type, or the error of build().
Result<TensorType> infer(const std::string& op, const std::vector<TensorType>& types, AttrList attrs = {},
                         int opset = 17) {
  GraphBuilder b("g");
  b.raw().set_opset(opset);
  std::vector<ValueId> ids;
  for (size_t i = 0; i < types.size(); ++i) ids.push_back(b.input("in" + std::to_string(i), types[i]));
  b.output(b.op(op, ids, attrs, "n"));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  return g.value(g.outputs()[0]).type;
}

void expect_type(const Result<TensorType>& r, const TensorType& want) {
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(*r, want) << r->to_string() << " vs " << want.to_string();
}

void expect_error(const Result<TensorType>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.is_ok()) << "inferred " << r->to_string();
  for (const std::string& part : parts)
    EXPECT_NE(r.status().message().find(part), std::string::npos)
        << "'" << part << "' not in: " << r.status().message();
}

TEST(ElementwiseOpsTest, EveryOpIsRegisteredAsCompute) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Relu", "Sigmoid", "Tanh", "Exp", "Sin", "Cos",
                         "Reciprocal", "Sqrt", "Neg", "Abs", "HardSigmoid", "HardSwish", "Clip"}) {
    const OpSchema* schema = find_op_schema(op);
    ASSERT_NE(schema, nullptr) << op;
    EXPECT_TRUE(schema->is_compute) << op;
    EXPECT_EQ(schema->max_outputs, 1) << op;
  }
}

TEST(ElementwiseOpsTest, BinaryBroadcastsLikeNumpy) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow"})
    expect_type(infer(op, {f32({2, 1, 4}), f32({3, 1})}), f32({2, 3, 4}));
}

TEST(ElementwiseOpsTest, BinaryBroadcastsScalarAndSizeOneDims) {
  expect_type(infer("Mul", {f32({}), f32({2, 3})}), f32({2, 3}));
  expect_type(infer("Add", {f32({1, 5, 1}), f32({7, 1, 1, 3})}), f32({7, 1, 5, 3}));
}

TEST(ElementwiseOpsTest, ArithmeticAcceptsInt64) {
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) expect_type(infer(op, {i64({3}), i64({})}), i64({3}));
}

TEST(ElementwiseOpsTest, PowTakesMixedNumericTypesAndGivesTheBases) {
  Result<TensorType> t = infer("Pow", {i64({3}), f32({3})});
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->dtype, DType::kInt64);
  expect_error(infer("Pow", {f32({3}), TensorType{DType::kBool, {3}}}),
               {"node 'n' (Pow)", "expects f32, i64 or i32 inputs, got bool[3]"});
}

TEST(ElementwiseOpsTest, BinaryRejectsDtypeMismatchNamingBothTypes) {
  expect_error(infer("Add", {f32({2, 3}), i64({3})}), {"node 'n' (Add)", "input types differ", "f32[2,3]", "i64[3]"});
}

TEST(ElementwiseOpsTest, BinaryRejectsUnsupportedDtype) {
  expect_error(infer("Sub", {TensorType{DType::kUInt8, {2}}, TensorType{DType::kUInt8, {2}}}),
               {"node 'n' (Sub)", "expects f32, i64 or i32 inputs, got u8[2]"});
}

TEST(ElementwiseOpsTest, BinaryRejectsShapesThatDoNotBroadcast) {
  expect_error(infer("Mul", {f32({2, 3}), f32({4})}), {"node 'n' (Mul)", "[2,3]", "[4]", "cannot be broadcast"});
}

TEST(ElementwiseOpsTest, BinaryRejectsWrongArity) {
  expect_error(infer("Add", {f32({2})}), {"node 'n' (Add)", "takes 2 inputs, got 1"});
}

TEST(ElementwiseOpsTest, UnaryKeepsShape) {
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Sin", "Cos", "Reciprocal", "Sqrt", "Neg", "Abs",
                         "HardSigmoid", "HardSwish", "Clip"})
    expect_type(infer(op, {f32({2, 3, 5})}), f32({2, 3, 5}));
  expect_type(infer("Relu", {f32({})}), f32({}));
}

TEST(ElementwiseOpsTest, UnaryRejectsNonFloat) {
  expect_error(infer("Relu", {i64({2})}), {"node 'n' (Relu)", "input must be f32, got i64[2]"});
  expect_error(infer("Sqrt", {TensorType{DType::kBool, {4}}}), {"node 'n' (Sqrt)", "bool[4]"});
}

TEST(ElementwiseOpsTest, HardSigmoidRejectsNonFloatAlpha) {
  expect_error(infer("HardSigmoid", {f32({2})}, {{"alpha", std::string("big")}}),
               {"node 'n' (HardSigmoid)", "attribute 'alpha' is string, expected float"});
}

TEST(ElementwiseOpsTest, ClipOpset11AcceptsOmittedAndScalarBounds) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", f32({2, 3}));
  const ValueId hi = b.input("hi", f32({}));
  const ValueId lo = b.constant_f32("lo", {1}, {-1.f});
  b.output(b.op("Clip", {x, kNoValue, hi}, {}, "upper_only"));
  b.output(b.op("Clip", {x, lo}, {}, "lower_only"));
  b.output(b.op("Clip", {x, lo, hi}, {}, "both"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  for (ValueId out : g->outputs()) EXPECT_EQ(g->value(out).type, f32({2, 3}));
}

TEST(ElementwiseOpsTest, ClipOpset11RejectsNonScalarBound) {
  expect_error(infer("Clip", {f32({2, 3}), f32({}), f32({2})}, {}, 13),
               {"node 'n' (Clip)", "max must be a scalar, got f32[2]"});
}

TEST(ElementwiseOpsTest, ClipOpset11RejectsBoundOfOtherType) {
  expect_error(infer("Clip", {f32({2}), i64({})}, {}, 12), {"node 'n' (Clip)", "min must have the input's type f32"});
}

TEST(ElementwiseOpsTest, ClipOpset11RejectsMinMaxAttributes) {
  expect_error(infer("Clip", {f32({2})}, {{"min", 0.f}}, 11),
               {"node 'n' (Clip)", "attribute 'min' is not allowed from opset 11"});
}

TEST(ElementwiseOpsTest, ClipOpset10TakesAttributesNotInputs) {
  expect_type(infer("Clip", {f32({4})}, {{"min", -1.f}, {"max", 1.f}}, 10), f32({4}));
  expect_error(infer("Clip", {f32({4}), f32({}), f32({})}, {}, 10),
               {"node 'n' (Clip)", "takes min and max as attributes before opset 11, got 3 inputs"});
}

}  // namespace
}  // namespace hetsched
