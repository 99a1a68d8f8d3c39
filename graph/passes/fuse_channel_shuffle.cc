#include "graph/passes/fuse_channel_shuffle.h"

#include <vector>

#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

struct Shuffle {
  std::vector<ValueId> inputs;
  int64_t group = 0;
  std::vector<NodeId> removed;  // the first Reshape, the Transpose and any Concat
};

// The Concat along the channels that writes `x` for `reader` alone, if any.
NodeId channel_concat(const Graph& graph, ValueId x, NodeId reader) {
  const NodeId concat = passes::producer_if(graph, x, "Concat", reader);
  if (concat == kNoNode) return kNoNode;
  const Result<int64_t> axis = graph.node(concat).attrs.require_int("axis");
  if (!axis.is_ok() || (*axis != 1 && *axis != -3)) return kNoNode;
  for (ValueId in : graph.node(concat).inputs) {
    if (in == kNoValue) return kNoNode;
    const Value& v = graph.value(in);
    if (!v.type_known || v.type.dtype != DType::kFloat32 || v.type.rank() != 4) return kNoNode;
  }
  return concat;
}

const Shape* known_shape(const Graph& graph, ValueId v) {
  const Value& value = graph.value(v);
  return value.type_known && value.type.is_static() ? &value.type.shape : nullptr;
}

// `last` is the second Reshape of a channel shuffle: its pieces, or group 0.
Shuffle match(const Graph& graph, NodeId last) {
  const Node& back = graph.node(last);
  if (back.op != "Reshape" || back.inputs.empty() || back.outputs.size() != 1) return {};
  const NodeId transpose = passes::producer_if(graph, back.inputs[0], "Transpose", last);
  if (transpose == kNoNode) return {};
  const Node& t = graph.node(transpose);
  const Result<std::vector<int64_t>> perm = t.attrs.require_ints("perm");
  if (!perm.is_ok() || *perm != std::vector<int64_t>{0, 2, 1, 3, 4}) return {};
  const NodeId split = passes::producer_if(graph, t.inputs[0], "Reshape", transpose);
  if (split == kNoNode) return {};
  const ValueId x = graph.node(split).inputs[0];
  const Shape* xs = known_shape(graph, x);
  const Shape* split_shape = known_shape(graph, t.inputs[0]);
  const Shape* ys = known_shape(graph, back.outputs[0]);
  if (!xs || !split_shape || !ys || xs->size() != 4 || split_shape->size() != 5 || *xs != *ys) return {};
  if (!passes::same_f32_type(graph, x, back.outputs[0])) return {};
  const Shape& s = *split_shape;
  const int64_t g = s[1];
  if (s[0] != (*xs)[0] || g < 1 || g * s[2] != (*xs)[1] || s[3] != (*xs)[2] || s[4] != (*xs)[3]) return {};
  if (const NodeId concat = channel_concat(graph, x, split); concat != kNoNode)
    return Shuffle{graph.node(concat).inputs, g, {concat, split, transpose}};
  return Shuffle{{x}, g, {split, transpose}};
}

}  // namespace

Result<int> fuse_channel_shuffle(Graph& graph) {
  std::vector<bool> keep(graph.num_nodes(), true);
  int fused = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    if (!keep[static_cast<size_t>(id)]) continue;
    const Shuffle m = match(graph, id);
    if (m.group == 0) continue;
    for (NodeId n : m.removed) keep[static_cast<size_t>(n)] = false;
    Node& node = graph.node(id);
    node.op = kChannelShuffleOp;
    node.inputs = m.inputs;
    node.attrs = Attributes();
    node.attrs.set("group", m.group);
    ++fused;
  }
  if (fused > 0) graph.compact(keep);
  return fused;
}

}  // namespace hetsched
