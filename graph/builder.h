// GraphBuilder: a small API for making graphs in code and tests.
//
//   GraphBuilder b("tiny");
//   ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
//   ValueId w = b.constant("w", Tensor::from_vector<float>(DType::kFloat32, {4, 3, 3, 3}, weights));
//   ValueId y = b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
//   b.output(b.op("Relu", {y}));
//   Result<Graph> g = b.build();   // validates and infers every shape
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "graph/shape_inference.h"

namespace hetsched {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name) : graph_(std::move(name)) {}

  ValueId input(const std::string& name, TensorType type) { return graph_.add_input(name, std::move(type)); }
  ValueId constant(const std::string& name, Tensor tensor) { return graph_.add_constant(name, std::move(tensor)); }
  // Convenience constants.
  // `values` fill the constant from its start (any rest stays zero); empty
  // values make a zero-filled (or zero-element) constant.
  ValueId constant_i64(const std::string& name, Shape shape, const std::vector<int64_t>& values);
  ValueId constant_f32(const std::string& name, Shape shape, const std::vector<float>& values);

  // Adds a node with one output and returns that output. The node is named
  // `name` or "<Op>_<n>"; its output "<node name>_out".
  ValueId op(const std::string& op_type, std::vector<ValueId> inputs,
             std::initializer_list<std::pair<std::string, Attribute>> attrs = {}, std::string name = "");
  // Same with `num_outputs` outputs.
  std::vector<ValueId> op_multi(const std::string& op_type, std::vector<ValueId> inputs, int num_outputs,
                                std::initializer_list<std::pair<std::string, Attribute>> attrs = {},
                                std::string name = "");

  void output(ValueId value) { graph_.add_output(value); }

  // Validates and infers shapes; the builder is left empty.
  Result<Graph> build(const InputShapes& input_shapes = {});
  // The graph as built so far, unchecked (for tests of validation itself).
  Graph& raw() { return graph_; }

 private:
  Graph graph_;
};

}  // namespace hetsched
