#include "graph/passes/fuse_gelu.h"

#include <optional>
#include <utility>
#include <vector>

#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kSqrt2 = 1.41421356237309505f;

using Match = passes::UnaryPattern;

// g = Erf(x / sqrt2) + 1, read only by `reader`: the nodes computing g, or
// none when g is not that gate of x.
std::vector<NodeId> erf_gate(const Graph& graph, ValueId g, ValueId x, NodeId reader) {
  const NodeId add = passes::producer_if(graph, g, "Add", reader);
  if (add == kNoNode) return {};
  const ValueId e = passes::other_than_scalar(graph, graph.node(add), 1.f, true);
  const NodeId erf = passes::producer_if(graph, e, "Erf", add);
  if (erf == kNoNode) return {};
  const ValueId scaled = graph.node(erf).inputs[0];
  NodeId scale = passes::producer_if(graph, scaled, "Div", erf);
  if (scale != kNoNode && passes::other_than_scalar(graph, graph.node(scale), kSqrt2, false) != x) scale = kNoNode;
  if (scale == kNoNode) {
    scale = passes::producer_if(graph, scaled, "Mul", erf);
    if (scale != kNoNode && passes::other_than_scalar(graph, graph.node(scale), kInvSqrt2, true) != x)
      scale = kNoNode;
  }
  if (scale == kNoNode) return {};
  return {scale, erf, add};
}

Match with_gate(ValueId x, std::vector<NodeId> nodes, NodeId extra) {
  nodes.push_back(extra);
  return Match{x, std::move(nodes)};
}

// last = Mul(a, b), the three factors x, 0.5 and the gate grouped as
//   a = x,            b = gate * 0.5
//   a = x * 0.5,      b = gate
//   a = x * gate,     b = 0.5
std::optional<Match> match_factors(const Graph& graph, NodeId last, ValueId a, ValueId b) {
  if (const NodeId h = passes::producer_if(graph, b, "Mul", last); h != kNoNode) {
    const ValueId g = passes::other_than_scalar(graph, graph.node(h), 0.5f, true);
    std::vector<NodeId> gate = erf_gate(graph, g, a, h);
    if (!gate.empty()) return with_gate(a, std::move(gate), h);
  }
  if (const NodeId h = passes::producer_if(graph, a, "Mul", last); h != kNoNode) {
    const ValueId x = passes::other_than_scalar(graph, graph.node(h), 0.5f, true);
    std::vector<NodeId> gate = x == kNoValue ? std::vector<NodeId>{} : erf_gate(graph, b, x, last);
    if (!gate.empty()) return with_gate(x, std::move(gate), h);
    const std::optional<float> half = passes::scalar(graph, b);
    if (half && passes::near(*half, 0.5f))
      for (size_t k = 0; k < 2; ++k) {
        const Node& product = graph.node(h);
        if (product.inputs.size() != 2) break;
        gate = erf_gate(graph, product.inputs[1 - k], product.inputs[k], h);
        if (!gate.empty()) return with_gate(product.inputs[k], std::move(gate), h);
      }
  }
  return std::nullopt;
}

std::optional<Match> match(const Graph& graph, NodeId last) {
  const Node& node = graph.node(last);
  if (node.op != "Mul" || node.outputs.size() != 1 || node.inputs.size() != 2) return std::nullopt;
  std::optional<Match> m = match_factors(graph, last, node.inputs[0], node.inputs[1]);
  if (!m) m = match_factors(graph, last, node.inputs[1], node.inputs[0]);
  if (!m) return std::nullopt;
  if (!passes::same_f32_type(graph, m->x, node.outputs[0])) return std::nullopt;
  return m;
}

}  // namespace

Result<int> fuse_gelu(Graph& graph) { return passes::fuse_unary_patterns(graph, "Gelu", match); }

}  // namespace hetsched
