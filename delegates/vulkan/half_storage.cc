#include "delegates/vulkan/half_storage.h"

#include <numeric>
#include <vector>

#include "delegates/vulkan/op_semantics.h"

namespace hetsched::vulkan {

namespace {

// Union-find over value ids.
struct Classes {
  std::vector<size_t> parent;
  explicit Classes(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t find(size_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

}  // namespace

std::set<ValueId> choose_half_values(const Graph& g) {
  const size_t count = g.num_values();
  Classes classes(count);
  std::vector<bool> pinned(count, false);
  auto join = [&](ValueId a, ValueId b) {
    if (a != kNoValue && b != kNoValue) classes.join(static_cast<size_t>(a), static_cast<size_t>(b));
  };
  for (const Node& n : g.nodes()) {
    if (n.outputs.empty()) continue;
    const ValueId out = n.outputs[0];
    if (is_alias_node(g, n) && !n.inputs.empty()) join(out, n.inputs[0]);
    if (n.op == "Concat")
      for (ValueId in : n.inputs) join(out, in);
    if ((is_reduce_op(n.op) || n.op == "GlobalAveragePool") && !n.inputs.empty() && g.value(n.inputs[0]).type.shape == g.value(out).type.shape)
      join(out, n.inputs[0]);
    // A Cast that changes the type runs a Cast shader on both sides.
    if (n.op == "Cast" && !is_alias_node(g, n)) {
      for (ValueId v : n.inputs)
        if (v != kNoValue) pinned[static_cast<size_t>(v)] = true;
      for (ValueId v : n.outputs) pinned[static_cast<size_t>(v)] = true;
    }
  }
  for (ValueId v : g.inputs()) pinned[static_cast<size_t>(v)] = true;
  for (ValueId v : g.outputs()) pinned[static_cast<size_t>(v)] = true;
  for (size_t v = 0; v < count; ++v) {
    const Value& val = g.value(static_cast<ValueId>(v));
    if (val.is_constant() || val.producer == kNoNode || val.type.dtype != DType::kFloat32 || val.type.byte_size() == 0)
      pinned[v] = true;
  }
  // A class is kept whole: one pinned member pins all.
  std::vector<bool> class_pinned(count, false);
  for (size_t v = 0; v < count; ++v)
    if (pinned[v]) class_pinned[classes.find(v)] = true;
  std::set<ValueId> half;
  for (size_t v = 0; v < count; ++v)
    if (!class_pinned[classes.find(v)]) half.insert(static_cast<ValueId>(v));
  return half;
}

Graph with_half_values(const Graph& island, const std::set<ValueId>& half) {
  Graph out = island;
  for (ValueId v : half) out.value(v).type.dtype = DType::kFloat16;
  return out;
}

}  // namespace hetsched::vulkan
