#include "graph/builder.h"

#include <algorithm>
#include <cstring>

namespace hetsched {

namespace {
// Not Tensor::from_vector: with empty values both pointers may be null, and
// memcpy from or to null is undefined even for 0 bytes (UBSan, scripts/asan.sh).
template <typename T>
Tensor filled(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t(TensorType{dtype, std::move(shape)});
  const size_t bytes = std::min(t.byte_size(), values.size() * sizeof(T));
  if (bytes) std::memcpy(t.raw(), values.data(), bytes);
  return t;
}
}  // namespace

ValueId GraphBuilder::constant_i64(const std::string& name, Shape shape, const std::vector<int64_t>& values) {
  return constant(name, filled(DType::kInt64, std::move(shape), values));
}

ValueId GraphBuilder::constant_f32(const std::string& name, Shape shape, const std::vector<float>& values) {
  return constant(name, filled(DType::kFloat32, std::move(shape), values));
}

ValueId GraphBuilder::op(const std::string& op_type, std::vector<ValueId> inputs,
                         std::initializer_list<std::pair<std::string, Attribute>> attrs, std::string name) {
  return op_multi(op_type, std::move(inputs), 1, attrs, std::move(name)).front();
}

std::vector<ValueId> GraphBuilder::op_multi(const std::string& op_type, std::vector<ValueId> inputs, int num_outputs,
                                            std::initializer_list<std::pair<std::string, Attribute>> attrs,
                                            std::string name) {
  if (name.empty()) name = graph_.unique_node_name(op_type);
  Attributes a;
  for (const auto& [k, v] : attrs) a.set(k, v);
  std::vector<std::string> outs;
  for (int i = 0; i < num_outputs; ++i)
    outs.push_back(graph_.unique_value_name(name + (num_outputs == 1 ? "_out" : "_out" + std::to_string(i))));
  NodeId id = graph_.add_node(op_type, name, std::move(inputs), std::move(outs), std::move(a));
  return graph_.node(id).outputs;
}

Result<Graph> GraphBuilder::build(const InputShapes& input_shapes) {
  Graph g = std::move(graph_);
  graph_ = Graph(g.name());
  HS_RETURN_IF_ERROR(check_graph(g, input_shapes));
  return g;
}

}  // namespace hetsched
