// Small graph edits the clean-up passes share. Internal to graph/passes.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched::passes {

inline bool is_graph_output(const Graph& graph, ValueId value) { return graph.is_output(value); }

// Makes every node input that reads `from` read `to` instead.
inline void replace_uses(Graph& graph, ValueId from, ValueId to) {
  for (size_t i = 0; i < graph.num_nodes(); ++i)
    for (ValueId& in : graph.node(static_cast<NodeId>(i)).inputs)
      if (in == from) in = to;
}

// Makes node `producer` write `value` as its output `k` instead of the value
// it wrote so far, which is left without a writer; the caller makes sure
// nothing reads that one any more. `value` keeps its name, so a graph output
// produced this way keeps the name the model gave it.
inline void take_over_output(Graph& graph, NodeId producer, size_t k, ValueId value) {
  const ValueId old = graph.node(producer).outputs[k];
  Value& v = graph.value(value);
  v.producer = producer;
  v.type = graph.value(old).type;
  v.type_known = graph.value(old).type_known;
  graph.node(producer).outputs[k] = value;
  graph.value(old).producer = kNoNode;
}

// The one node that reads `value`, or kNoNode when there are none or several
// (or a graph output exposes it, which counts as a reader).
inline NodeId single_consumer(const Graph& graph, ValueId value) {
  if (is_graph_output(graph, value)) return kNoNode;
  const std::vector<NodeId> readers = graph.consumers(value);
  if (readers.size() != 1) return kNoNode;
  int uses = 0;
  for (ValueId in : graph.node(readers[0]).inputs) uses += in == value;
  return uses == 1 ? readers[0] : kNoNode;
}

// The value of a one-element f32 constant, if `value` is one.
inline std::optional<float> scalar(const Graph& graph, ValueId value) {
  if (value == kNoValue) return std::nullopt;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->dtype() != DType::kFloat32 || v.constant->num_elements() != 1)
    return std::nullopt;
  return v.constant->data<float>()[0];
}

inline bool near(float a, float b) { return std::abs(a - b) <= 1e-6f * std::max(1.f, std::abs(b)); }

// The node writing `value` when `op` is its op and `value` its only use,
// read by `reader`; kNoNode otherwise.
inline NodeId producer_if(const Graph& graph, ValueId value, const char* op, NodeId reader) {
  if (value == kNoValue) return kNoNode;
  const NodeId p = graph.value(value).producer;
  if (p == kNoNode || graph.node(p).op != op || graph.node(p).outputs.size() != 1) return kNoNode;
  return single_consumer(graph, value) == reader ? p : kNoNode;
}

// For a binary node with one scalar-constant operand: the other operand,
// when the constant is `want`.
inline ValueId other_than_scalar(const Graph& graph, const Node& node, float want, bool either_side) {
  if (node.inputs.size() != 2) return kNoValue;
  for (size_t k = 0; k < 2; ++k) {
    if (k == 0 && !either_side) continue;
    const std::optional<float> c = scalar(graph, node.inputs[k]);
    if (c && near(*c, want)) return node.inputs[1 - k];
  }
  return kNoValue;
}

// A pattern that computes an elementwise function of one value: that value
// and the pattern's nodes other than its last.
struct UnaryPattern {
  ValueId x = kNoValue;
  std::vector<NodeId> removed;
};

// Whether `x` and `y` are both f32 of one type: a pattern from x to y is
// then one elementwise op.
inline bool same_f32_type(const Graph& graph, ValueId x, ValueId y) {
  const Value& xv = graph.value(x);
  const Value& yv = graph.value(y);
  return xv.type_known && yv.type_known && xv.type.dtype == DType::kFloat32 && xv.type == yv.type;
}

// Replaces every pattern that `match(graph, id)` finds ending at node `id`
// by one `op` node reading the pattern's x and writing id's output (name
// kept); the pattern's other nodes go. Returns how many were replaced.
template <typename Match>
Result<int> fuse_unary_patterns(Graph& graph, const char* op, Match match) {
  std::vector<bool> keep(graph.num_nodes(), true);
  int fused = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    if (!keep[static_cast<size_t>(id)]) continue;
    const std::optional<UnaryPattern> m = match(graph, id);
    if (!m) continue;
    for (NodeId n : m->removed) keep[static_cast<size_t>(n)] = false;
    Node& node = graph.node(id);
    node.op = op;
    node.inputs = {m->x};
    node.attrs = Attributes();
    ++fused;
  }
  if (fused > 0) graph.compact(keep);
  return fused;
}

}  // namespace hetsched::passes
