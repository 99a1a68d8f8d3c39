#include "graph/shape_inference.h"

#include "graph/op_schema.h"
#include "graph/tensor_size.h"

namespace hetsched {

Status apply_input_shapes(Graph& graph, const InputShapes& input_shapes) {
  for (const auto& [name, shape] : input_shapes) {
    ValueId id = graph.find_value(name);
    bool is_input = false;
    for (ValueId in : graph.inputs()) is_input |= in == id;
    if (!is_input) {
      std::string names;
      for (ValueId in : graph.inputs()) names += (names.empty() ? "" : ", ") + graph.value(in).name;
      return invalid_argument("input shape given for '" + name + "', which is not a graph input (inputs: " + names + ")");
    }
    TensorType& type = graph.value(id).type;
    if (type.rank() != shape.size())
      return invalid_argument("input '" + name + "' has rank " + std::to_string(type.rank()) + " (" + type.to_string() +
                              "), but the given shape " + shape_to_string(shape) + " has rank " +
                              std::to_string(shape.size()));
    for (size_t i = 0; i < shape.size(); ++i)
      if (type.shape[i] != kDynamicDim && type.shape[i] != shape[i])
        return invalid_argument("input '" + name + "' has static dim " + std::to_string(i) + " = " +
                                std::to_string(type.shape[i]) + ", but the given shape " + shape_to_string(shape) +
                                " says " + std::to_string(shape[i]));
    type.shape = shape;
    if (!has_representable_size(type))
      return invalid_argument("input '" + name + "' of shape " + type.to_string() + " is larger than 2^63 bytes");
  }
  for (ValueId in : graph.inputs()) {
    const Value& v = graph.value(in);
    if (!v.type.is_static())
      return invalid_argument("input '" + v.name + "' has a dynamic shape " + v.type.to_string() +
                              "; give it with --input-shape " + v.name + "=<dims, e.g. 1x3x224x224>");
  }
  return Status::ok();
}

Status infer_shapes(Graph& graph, const InputShapes& input_shapes) {
  HS_RETURN_IF_ERROR(apply_input_shapes(graph, input_shapes));
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id)
    HS_RETURN_IF_ERROR(infer_node_shapes(graph, id));
  return Status::ok();
}

Status infer_node_shapes(Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  const OpSchema* schema = find_op_schema(node.op);
  if (!schema) return unsupported(graph.describe_node(id) + ": op '" + node.op + "' is not in the hetsched op set");
  InferContext ctx(graph, id);
  const int nin = static_cast<int>(node.inputs.size());
  if (nin < schema->min_inputs || nin > schema->max_inputs)
    return ctx.error("takes " + std::to_string(schema->min_inputs) +
                     (schema->max_inputs != schema->min_inputs ? " to " + std::to_string(schema->max_inputs) : "") +
                     " inputs, got " + std::to_string(nin));
  const int nout = static_cast<int>(node.outputs.size());
  if (nout < schema->min_outputs || nout > schema->max_outputs)
    return ctx.error("has " + std::to_string(schema->min_outputs) +
                     (schema->max_outputs != schema->min_outputs ? " to " + std::to_string(schema->max_outputs) : "") +
                     " outputs, got " + std::to_string(nout));
  for (int i = 0; i < schema->min_inputs; ++i)
    if (node.inputs[i] == kNoValue) return ctx.error("required input " + std::to_string(i) + " is missing");
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const Value& in = graph.value(node.inputs[i]);
    if (!in.type_known) return ctx.error("input '" + in.name + "' has no known type");
  }
  std::vector<TensorType> outs(node.outputs.size());
  HS_RETURN_IF_ERROR(schema->infer(ctx, outs));
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].is_static()) return ctx.error("inferred a dynamic output shape " + outs[i].to_string());
    for (int64_t d : outs[i].shape)
      if (d < 0) return ctx.error("inferred a negative dimension in " + outs[i].to_string());
    if (!has_representable_size(outs[i])) return ctx.error("inferred " + outs[i].to_string() + ", larger than 2^63 bytes");
    Value& out = graph.value(node.outputs[i]);
    out.type = outs[i];
    out.type_known = true;
  }
  return Status::ok();
}

Status check_graph(Graph& graph, const InputShapes& input_shapes) {
  HS_RETURN_IF_ERROR(graph.validate());
  return infer_shapes(graph, input_shapes);
}

}  // namespace hetsched
