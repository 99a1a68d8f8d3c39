#include "graph/passes/constant_folding.h"

#include <cstring>
#include <memory>

#include "graph/ops_extra.h"
#include "graph/passes/rewrite_util.h"
#include "graph/shape_inference.h"

namespace hetsched {

namespace {

// Shape needs only its input's type, which shape inference has made static.
Result<std::vector<Tensor>> evaluate_shape(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> dims,
                      shape_op_dims(node.attrs, graph.value(node.inputs[0]).type.shape));
  std::vector<Tensor> out;
  // A scalar's shape is empty: no memcpy from an empty vector's null data.
  Tensor shape(TensorType{DType::kInt64, {static_cast<int64_t>(dims.size())}});
  if (!dims.empty()) std::memcpy(shape.raw(), dims.data(), dims.size() * sizeof(int64_t));
  out.push_back(std::move(shape));
  return out;
}

bool all_inputs_constant(const Graph& graph, const Node& node) {
  for (ValueId in : node.inputs)
    if (in != kNoValue && !graph.value(in).is_constant()) return false;
  return true;
}

}  // namespace

Result<int> fold_constants(Graph& graph, const NodeEvaluator& evaluate) {
  std::vector<bool> keep(graph.num_nodes(), true);
  int folded = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    HS_RETURN_IF_ERROR(infer_node_shapes(graph, id));
    const Node& node = graph.node(id);
    bool exposes_output = false;
    for (ValueId out : node.outputs) exposes_output |= passes::is_graph_output(graph, out);
    const bool is_shape = node.op == "Shape";
    if (exposes_output || (!is_shape && !all_inputs_constant(graph, node))) continue;

    std::vector<const Tensor*> inputs;
    for (ValueId in : node.inputs) inputs.push_back(in == kNoValue ? nullptr : graph.value(in).constant.get());
    Result<std::vector<Tensor>> outputs = is_shape ? evaluate_shape(graph, node) : evaluate(graph, id, inputs);
    if (!outputs.is_ok()) {
      if (outputs.status().code() == StatusCode::kUnsupported) continue;
      return outputs.status().with_context("failed to fold constants: ");
    }
    if (outputs->size() != node.outputs.size())
      return internal_error("failed to fold constants: " + graph.describe_node(id) + " evaluated to " +
                            std::to_string(outputs->size()) + " outputs, expected " +
                            std::to_string(node.outputs.size()));
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      Value& v = graph.value(node.outputs[k]);
      Tensor& t = (*outputs)[k];
      if (t.type() != v.type)
        return internal_error("failed to fold constants: " + graph.describe_node(id) + " output " + std::to_string(k) +
                              " evaluated to " + t.type().to_string() + ", inferred " + v.type.to_string());
      v.constant = std::make_shared<const Tensor>(std::move(t));
      v.producer = kNoNode;
    }
    keep[static_cast<size_t>(id)] = false;
    ++folded;
  }
  if (folded > 0) graph.compact(keep);
  return folded;
}

}  // namespace hetsched
