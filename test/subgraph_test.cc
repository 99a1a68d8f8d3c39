#include "graph/subgraph.h"

#include <gtest/gtest.h>

#include "graph/graph_serialize.h"

namespace hetsched {
namespace {

// x → Mul(x, w) → m → Relu → r → Add(r, b) → s → Relu → t, types set by hand.
struct Chain {
  Graph g{"chain"};
  ValueId x, w, b, m, r, s, t;
  NodeId mul, relu, add, relu2;

  Chain() {
    g.set_opset(11);
    x = g.add_input("x", {DType::kFloat32, {1, 4}});
    w = g.add_constant("w", Tensor::from_vector<float>(DType::kFloat32, {1, 4}, {1, 2, 3, 4}));
    b = g.add_constant("b", Tensor::from_vector<float>(DType::kFloat32, {4}, {0.5f, 0.5f, 0.5f, 0.5f}));
    mul = g.add_node("Mul", "mul", {x, w}, {"m"});
    m = g.node(mul).outputs[0];
    Attributes relu_attrs;
    relu_attrs.set("tag", std::string("first"));
    relu = g.add_node("Relu", "relu", {m}, {"r"}, std::move(relu_attrs));
    r = g.node(relu).outputs[0];
    add = g.add_node("Add", "add", {r, b, kNoValue}, {"s"});
    s = g.node(add).outputs[0];
    relu2 = g.add_node("Relu", "relu2", {s}, {"t"});
    t = g.node(relu2).outputs[0];
    for (ValueId v : {m, r, s, t}) {
      g.value(v).type = {DType::kFloat32, {1, 4}};
      g.value(v).type_known = true;
    }
    g.value(t).type_known = false;
    g.add_output(t);
  }
};

TEST(SubgraphTest, ExtractKeepsNodesTypesAndSharesConstants) {
  Chain c;
  const NodeId nodes[] = {c.relu, c.add};
  const ValueId inputs[] = {c.m};
  const ValueId outputs[] = {c.s, c.r};
  Graph sub = extract_subgraph(c.g, nodes, inputs, outputs);
  ASSERT_TRUE(sub.validate().is_ok()) << sub.validate().message();

  EXPECT_EQ(sub.name(), "chain");
  EXPECT_EQ(sub.opset(), 11);
  ASSERT_EQ(sub.num_nodes(), 2u);
  EXPECT_EQ(sub.node(0).name, "relu");
  EXPECT_EQ(sub.node(0).op, "Relu");
  EXPECT_EQ(std::get<std::string>(*sub.node(0).attrs.find("tag")), "first");
  EXPECT_EQ(sub.node(1).name, "add");
  ASSERT_EQ(sub.inputs().size(), 1u);
  EXPECT_EQ(sub.value(sub.inputs()[0]).name, "m");
  EXPECT_EQ(sub.value(sub.inputs()[0]).type, (TensorType{DType::kFloat32, {1, 4}}));
  EXPECT_TRUE(sub.value(sub.inputs()[0]).type_known);
  ASSERT_EQ(sub.outputs().size(), 2u);
  EXPECT_EQ(sub.value(sub.outputs()[0]).name, "s");
  EXPECT_EQ(sub.value(sub.outputs()[1]).name, "r");
  // Only the constant the nodes read comes along, and it is the same object.
  EXPECT_EQ(sub.find_value("w"), kNoValue);
  ValueId b = sub.find_value("b");
  ASSERT_NE(b, kNoValue);
  EXPECT_EQ(sub.value(b).constant.get(), c.g.value(c.b).constant.get());
  EXPECT_EQ(sub.node(1).inputs, (std::vector<ValueId>{sub.find_value("r"), b, kNoValue}));
  EXPECT_EQ(sub.find_value("x"), kNoValue);
  EXPECT_EQ(sub.find_value("t"), kNoValue);
  EXPECT_EQ(sub.num_values(), 4u);  // m, b, r, s
}

TEST(SubgraphTest, ExtractCopiesUnknownTypesAsUnknown) {
  Chain c;
  const NodeId nodes[] = {c.relu2};
  const ValueId inputs[] = {c.s};
  const ValueId outputs[] = {c.t};
  Graph sub = extract_subgraph(c.g, nodes, inputs, outputs);
  EXPECT_FALSE(sub.value(sub.find_value("t")).type_known);
  EXPECT_TRUE(sub.value(sub.find_value("s")).type_known);
}

TEST(SubgraphTest, ExtractedGraphSurvivesSerialization) {
  Chain c;
  const NodeId nodes[] = {c.mul, c.relu, c.add};
  const ValueId inputs[] = {c.x};
  const ValueId outputs[] = {c.s};
  Graph sub = extract_subgraph(c.g, nodes, inputs, outputs);
  Result<Graph> back = deserialize_graph(serialize_graph(sub));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->num_nodes(), 3u);
  EXPECT_EQ(back->value(back->find_value("w")).constant->to_float_vector(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(SubgraphDeathTest, ExtractAbortsOnInputNotProvided) {
  Chain c;
  const NodeId nodes[] = {c.add};
  const ValueId outputs[] = {c.s};
  EXPECT_DEATH(
      extract_subgraph(c.g, nodes, {}, outputs),
      "node 'add' \\(Add\\): input 'r' is neither a sub-graph input, a constant, nor written by an earlier node");
}

TEST(SubgraphDeathTest, ExtractAbortsOnOutputNotWritten) {
  Chain c;
  const NodeId nodes[] = {c.relu};
  const ValueId inputs[] = {c.m};
  const ValueId outputs[] = {c.t};
  EXPECT_DEATH(extract_subgraph(c.g, nodes, inputs, outputs), "output 't' is not written by the sub-graph's nodes");
}

}  // namespace
}  // namespace hetsched
