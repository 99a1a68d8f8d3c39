#include "graph/passes/fuse_swish.h"

#include <optional>

#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

std::optional<passes::UnaryPattern> match(const Graph& graph, NodeId last) {
  const Node& node = graph.node(last);
  if (node.op != "Mul" || node.outputs.size() != 1 || node.inputs.size() != 2) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const NodeId sigmoid = passes::producer_if(graph, node.inputs[1 - k], "Sigmoid", last);
    if (sigmoid == kNoNode || graph.node(sigmoid).inputs.size() != 1) continue;
    const ValueId x = node.inputs[k];
    if (graph.node(sigmoid).inputs[0] != x || !passes::same_f32_type(graph, x, node.outputs[0])) continue;
    return passes::UnaryPattern{x, {sigmoid}};
  }
  return std::nullopt;
}

}  // namespace

Result<int> fuse_swish(Graph& graph) { return passes::fuse_unary_patterns(graph, "Swish", match); }

}  // namespace hetsched
