#include "graph/graph.h"

#include <gtest/gtest.h>

#include "graph/builder.h"

namespace hetsched {
namespace {

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
