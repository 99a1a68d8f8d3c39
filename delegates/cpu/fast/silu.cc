#include "delegates/cpu/fast/silu.h"

#include <algorithm>

#include "delegates/cpu/fast/activation_pass.h"

namespace hetsched::cpu::fast {

namespace {

// Rough flops per element (exp's polynomial and a divide), for parallel_tasks.
constexpr double kFlopsPerElement = 20;

bool static_f32(const Value& v) { return v.type_known && v.type.is_static() && v.type.dtype == DType::kFloat32; }

// The SiLU whose Sigmoid is node `n`, if it is one.
std::optional<SiluGroup> match_silu(const Graph& graph, NodeId n) {
  const Node& sig = graph.node(n);
  if (sig.op != "Sigmoid" || sig.inputs.size() != 1 || sig.outputs.size() != 1) return std::nullopt;
  const ValueId x = sig.inputs[0], s = sig.outputs[0];
  if (graph.value(x).is_constant() || !static_f32(graph.value(x)) || !static_f32(graph.value(s))) return std::nullopt;
  if (graph.is_output(s)) return std::nullopt;
  const std::vector<NodeId> readers = graph.consumers(s);
  if (readers.size() != 1) return std::nullopt;
  const Node& mul = graph.node(readers[0]);
  if (mul.op != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) return std::nullopt;
  const bool pair = (mul.inputs[0] == x && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == x);
  if (!pair || !static_f32(graph.value(mul.outputs[0]))) return std::nullopt;
  if (graph.value(mul.outputs[0]).type.shape != graph.value(x).type.shape) return std::nullopt;
  return SiluGroup{n, readers[0], x, mul.outputs[0]};
}

}  // namespace

std::vector<SiluGroup> find_silu_groups(const Graph& graph) {
  std::vector<SiluGroup> groups;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    if (std::optional<SiluGroup> g = match_silu(graph, n)) groups.push_back(*g);
  return groups;
}

std::optional<SiluGroup> silu_reading(const Graph& graph, ValueId x) {
  if (graph.is_output(x)) return std::nullopt;
  const std::vector<NodeId> readers = graph.consumers(x);
  if (readers.size() != 2) return std::nullopt;
  for (NodeId r : readers)
    if (std::optional<SiluGroup> g = match_silu(graph, r); g && g->x == x) {
      const NodeId other = readers[0] == r ? readers[1] : readers[0];
      if (other == g->mul) return g;
    }
  return std::nullopt;
}

Result<std::unique_ptr<FastOp>> make_silu(const FastOpContext& ctx, const SiluGroup& group) {
  return make_activation_op(ctx.tensor_of(group.x), ctx.tensor_of(group.output), ctx.pool, ActivationPass::silu(),
                            kFlopsPerElement);
}

}  // namespace hetsched::cpu::fast
