#include "graph/passes/fuse_hard_swish.h"

#include <cmath>
#include <optional>
#include <vector>

#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

bool clip_is_0_6(const Graph& graph, const Node& clip) {
  float lo = -INFINITY, hi = INFINITY;
  if (graph.opset() <= 10) {
    Result<float> a = clip.attrs.get_float("min", lo), b = clip.attrs.get_float("max", hi);
    if (!a.is_ok() || !b.is_ok()) return false;
    lo = *a;
    hi = *b;
  } else {
    for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
      if (clip.inputs[i] == kNoValue) continue;
      const std::optional<float> c = passes::scalar(graph, clip.inputs[i]);
      if (!c) return false;
      (i == 1 ? lo : hi) = *c;
    }
  }
  return lo == 0.f && hi == 6.f;
}

using Match = passes::UnaryPattern;

// Mul(x, g) or Mul(g, x) where g = gate(x); `gate` returns the nodes that
// compute g from x (empty when g is not such a gate).
template <typename Gate>
std::optional<Match> match_product(const Graph& graph, NodeId mul_id, Gate gate) {
  const Node& mul = graph.node(mul_id);
  if (mul.op != "Mul" || mul.inputs.size() != 2) return std::nullopt;
  for (size_t k = 0; k < 2; ++k) {
    const ValueId x = mul.inputs[k];
    std::vector<NodeId> nodes = gate(mul.inputs[1 - k], x, mul_id);
    if (!nodes.empty()) return Match{x, nodes};
  }
  return std::nullopt;
}

// g = Clip(x + 3, 0, 6).
std::vector<NodeId> clip_gate(const Graph& graph, ValueId g, ValueId x, NodeId reader) {
  const NodeId clip_id = passes::producer_if(graph, g, "Clip", reader);
  if (clip_id == kNoNode || !clip_is_0_6(graph, graph.node(clip_id))) return {};
  const NodeId add_id = passes::producer_if(graph, graph.node(clip_id).inputs[0], "Add", clip_id);
  if (add_id == kNoNode || passes::other_than_scalar(graph, graph.node(add_id), 3.f, true) != x) return {};
  return {add_id, clip_id};
}

// g = HardSigmoid(x) with alpha 1/6, beta 0.5.
std::vector<NodeId> hard_sigmoid_gate(const Graph& graph, ValueId g, ValueId x, NodeId reader) {
  const NodeId hs_id = passes::producer_if(graph, g, "HardSigmoid", reader);
  if (hs_id == kNoNode || graph.node(hs_id).inputs[0] != x) return {};
  Result<float> alpha = graph.node(hs_id).attrs.get_float("alpha", 0.2f);
  Result<float> beta = graph.node(hs_id).attrs.get_float("beta", 0.5f);
  if (!alpha.is_ok() || !beta.is_ok() || !passes::near(*alpha, 1.f / 6.f) || *beta != 0.5f) return {};
  return {hs_id};
}

// The HardSwish pattern ending at node `last`, if there is one.
std::optional<Match> match(const Graph& graph, NodeId last) {
  const Node& node = graph.node(last);
  if (node.outputs.size() != 1) return std::nullopt;
  std::optional<Match> m;
  if (node.op == "Mul") {
    m = match_product(graph, last, [&](ValueId g, ValueId x, NodeId r) { return hard_sigmoid_gate(graph, g, x, r); });
  }
  if (!m) {
    ValueId product = kNoValue;
    if (node.op == "Div") product = passes::other_than_scalar(graph, node, 6.f, false);
    if (node.op == "Mul") product = passes::other_than_scalar(graph, node, 1.f / 6.f, true);
    const NodeId mul_id = passes::producer_if(graph, product, "Mul", last);
    if (mul_id == kNoNode) return std::nullopt;
    m = match_product(graph, mul_id, [&](ValueId g, ValueId x, NodeId r) { return clip_gate(graph, g, x, r); });
    if (m) m->removed.push_back(mul_id);
  }
  if (!m) return std::nullopt;
  if (!passes::same_f32_type(graph, m->x, node.outputs[0])) return std::nullopt;
  return m;
}

}  // namespace

Result<int> fuse_hard_swish(Graph& graph) { return passes::fuse_unary_patterns(graph, "HardSwish", match); }

}  // namespace hetsched
