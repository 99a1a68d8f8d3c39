#include "graph/graph.h"

#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/dtype.h"

namespace hetsched {
namespace {

// What `run --check` and the output summaries read: 16-bit floats widened
// exactly, not as integers (bf16 read as 0 before).
TEST(TensorTest, ToFloatVectorWidensHalvesAndBfloat16s) {
  for (const DType d : {DType::kFloat16, DType::kBFloat16}) {
    Tensor t(TensorType{d, {3}});
    const float values[] = {1.5f, -2.25f, 0.f};
    for (int i = 0; i < 3; ++i) t.data<uint16_t>()[i] = float_to_half_float(d, values[i]);
    EXPECT_EQ(t.to_float_vector(), (std::vector<float>{1.5f, -2.25f, 0.f}));
  }
}

TEST(GraphTest, ValidateRejectsUseBeforeDefinition) {
  Graph g("g");
  ValueId x = g.add_input("x", {DType::kFloat32, {2}});
  g.add_node("Relu", "a", {x}, {"a_out"});
  NodeId b = g.add_node("Relu", "b", {x}, {"b_out"});
  // make node a read b's output: a comes before b
  g.node(0).inputs[0] = g.node(b).outputs[0];
  g.add_output(g.node(b).outputs[0]);
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("node 'a' (Relu)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("earlier node"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace hetsched

namespace hetsched {
namespace {

TEST(GraphTest, ValidateRejectsDuplicateValueNames) {
  Graph g("g");
  ValueId x = g.add_input("x", {DType::kFloat32, {2}});
  NodeId n = g.add_node("Relu", "r", {x}, {"x"});
  g.add_output(g.node(n).outputs[0]);
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "graph 'g': value name 'x' is used twice");
}

TEST(GraphTest, ValidateRejectsDuplicateNodeNames) {
  Graph g("g");
  ValueId x = g.add_input("x", {DType::kFloat32, {2}});
  NodeId a = g.add_node("Relu", "same", {x}, {"a"});
  NodeId b = g.add_node("Relu", "same", {g.node(a).outputs[0]}, {"b"});
  g.add_output(g.node(b).outputs[0]);
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "node 'same' (Relu): node name is used twice");
}

TEST(GraphTest, ValidateRejectsAGraphWithoutOutputs) {
  Graph g("g");
  ValueId x = g.add_input("x", {DType::kFloat32, {2}});
  g.add_node("Relu", "r", {x}, {"y"});
  Status s = g.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "graph 'g' has no outputs");
}

TEST(GraphTest, ValidateRejectsAnInputThatIsAlsoAConstant) {
  // An input that carries constant data too, as a malformed file might.
  Graph bad("bad");
  ValueId x = bad.add_input("x", {DType::kFloat32, {2}});
  bad.value(x).constant = std::make_shared<const Tensor>(TensorType{DType::kFloat32, {2}});
  bad.add_output(x);
  Status s = bad.validate();
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "graph 'bad': input 'x' is also a constant");
}

TEST(GraphTest, OmittedOptionalInputsAreAllowed) {
  GraphBuilder b("clip");
  ValueId x = b.input("x", {DType::kFloat32, {4}});
  b.output(b.op("Clip", {x, kNoValue, b.constant_f32("hi", {}, {0.5f})}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
}

TEST(GraphTest, DynamicInputNeedsAShape) {
  GraphBuilder b("dyn");
  ValueId x = b.input("x", {DType::kFloat32, {1, 3, kDynamicDim, kDynamicDim}});
  b.output(b.op("Relu", {x}));
  auto g = b.build();
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().message(),
            "input 'x' has a dynamic shape f32[1,3,?,?]; give it with --input-shape x=<dims, e.g. 1x3x224x224>");
}

TEST(GraphTest, GivenInputShapesResolveDynamicDims) {
  GraphBuilder b("dyn");
  ValueId x = b.input("x", {DType::kFloat32, {1, 3, kDynamicDim, kDynamicDim}});
  ValueId y = b.op("Relu", {x});
  b.output(y);
  auto g = b.build({{"x", {1, 3, 32, 48}}});
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->value(g->outputs()[0]).type.to_string(), "f32[1,3,32,48]");
}

TEST(GraphTest, GivenShapeMustAgreeWithStaticDims) {
  GraphBuilder b("dyn");
  ValueId x = b.input("x", {DType::kFloat32, {1, 3, kDynamicDim}});
  b.output(b.op("Relu", {x}));
  auto g = b.build({{"x", {1, 4, 8}}});
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().message(), "input 'x' has static dim 1 = 3, but the given shape [1,4,8] says 4");
  GraphBuilder c("dyn");
  ValueId z = c.input("z", {DType::kFloat32, {2}});
  c.output(c.op("Relu", {z}));
  auto wrong = c.build({{"nope", {2}}});
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_EQ(wrong.status().message(), "input shape given for 'nope', which is not a graph input (inputs: z)");
}

TEST(GraphTest, UnknownOpIsAnErrorNamingTheNode) {
  GraphBuilder b("unknown");
  ValueId x = b.input("x", {DType::kFloat32, {2}});
  b.output(b.op("NonMaxSuppression", {x}, {}, "nms"));
  auto g = b.build();
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().message(), "node 'nms' (NonMaxSuppression): op 'NonMaxSuppression' is not in the hetsched op set");
}

TEST(GraphTest, WrongInputCountNamesTheNodeAndTheArity) {
  GraphBuilder b("arity");
  ValueId x = b.input("x", {DType::kFloat32, {2}});
  b.output(b.op("Add", {x}, {}, "add"));
  auto g = b.build();
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().message(), "node 'add' (Add): takes 2 inputs, got 1");
}

TEST(GraphTest, CompactDropsNodesAndRenumbers) {
  GraphBuilder b("compact");
  ValueId x = b.input("x", {DType::kFloat32, {2}});
  ValueId dead = b.op("Relu", {x}, {}, "dead");
  (void)dead;
  b.output(b.op("Sin", {x}, {}, "live"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  g->compact({false, true});
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->node(0).name, "live");
  EXPECT_EQ(g->find_value("dead_out"), kNoValue);
  EXPECT_TRUE(g->validate().is_ok());
}

TEST(ShapeTest, ParsesAndPrintsShapes) {
  auto s = parse_shape("1x3x640x640");
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(shape_to_string(*s), "[1,3,640,640]");
  EXPECT_FALSE(parse_shape("1x3xAx4").is_ok());
  EXPECT_FALSE(parse_shape("").is_ok());
  EXPECT_FALSE(parse_shape("1xx2").is_ok());
  EXPECT_TRUE(parse_shape("9223372036854775807").is_ok());   // 2^63 - 1
  EXPECT_FALSE(parse_shape("9223372036854775808").is_ok());  // one more
  EXPECT_FALSE(parse_shape("99999999999999999999x3").is_ok());
  EXPECT_EQ(TensorType({DType::kInt64, {2, kDynamicDim}}).to_string(), "i64[2,?]");
}

}  // namespace
}  // namespace hetsched
