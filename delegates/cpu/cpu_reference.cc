#include "delegates/cpu/cpu_reference.h"

#include "delegates/cpu/kernel.h"

namespace hetsched::cpu {

namespace {

Result<std::vector<Tensor>> run_node(const Graph& graph, NodeId id, const std::vector<const Tensor*>& inputs) {
  const Node& node = graph.node(id);
  const KernelFn* kernel = find_kernel(node.op);
  if (!kernel) return unsupported(graph.describe_node(id) + ": op has no portable CPU kernel");
  std::vector<Tensor> outputs;
  for (ValueId out : node.outputs) {
    const Value& v = graph.value(out);
    if (!v.type_known || !v.type.is_static())
      return failed_precondition(graph.describe_node(id) + ": output '" + v.name + "' has no inferred type");
    outputs.emplace_back(v.type);
  }
  std::vector<Tensor*> out_ptrs;
  for (Tensor& t : outputs) out_ptrs.push_back(&t);
  const KernelContext ctx{node, inputs, out_ptrs, graph.opset()};
  HS_RETURN_IF_ERROR((*kernel)(ctx));
  return outputs;
}

}  // namespace

NodeEvaluator reference_node_evaluator() {
  return
      [](const Graph& graph, NodeId node, std::vector<const Tensor*> inputs) { return run_node(graph, node, inputs); };
}

Result<std::vector<Tensor>> run_graph_reference(const Graph& graph, const std::vector<Tensor>& inputs) {
  const auto& graph_inputs = graph.inputs();
  if (inputs.size() != graph_inputs.size())
    return invalid_argument("failed to run graph '" + graph.name() + "': expected " +
                            std::to_string(graph_inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  // Each value's tensor: constants and inputs are borrowed, node outputs owned here.
  std::vector<const Tensor*> tensors(graph.num_values(), nullptr);
  std::vector<Tensor> owned(graph.num_values());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph_inputs[i]);
    if (inputs[i].type() != v.type)
      return invalid_argument("failed to run graph '" + graph.name() + "': input '" + v.name + "' is " +
                              v.type.to_string() + ", got " + inputs[i].type().to_string());
    tensors[static_cast<size_t>(graph_inputs[i])] = &inputs[i];
  }
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant()) tensors[static_cast<size_t>(v)] = graph.value(v).constant.get();
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& node = graph.node(id);
    std::vector<const Tensor*> in;
    for (ValueId v : node.inputs) in.push_back(v == kNoValue ? nullptr : tensors[static_cast<size_t>(v)]);
    auto outs = run_node(graph, id, in);
    if (!outs.is_ok()) return outs.status().with_context("failed to run graph '" + graph.name() + "': ");
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const auto slot = static_cast<size_t>(node.outputs[k]);
      owned[slot] = std::move((*outs)[k]);
      tensors[slot] = &owned[slot];
    }
  }
  std::vector<Tensor> result;
  for (ValueId out : graph.outputs()) {
    const Tensor* t = tensors[static_cast<size_t>(out)];
    if (!t)
      return internal_error("failed to run graph '" + graph.name() + "': output '" + graph.value(out).name +
                            "' was never computed");
    result.push_back(*t);
  }
  return result;
}

}  // namespace hetsched::cpu
