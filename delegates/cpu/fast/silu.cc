#include "delegates/cpu/fast/silu.h"

#include <algorithm>

#include "delegates/cpu/fast/activation_pass.h"

namespace hetsched::cpu::fast {

namespace {

constexpr size_t kBlock = 4096;
// Rough flops per element (exp's polynomial and a divide), for parallel_tasks.
constexpr double kFlopsPerElement = 20;

class Silu final : public FastOp {
 public:
  Silu(const Tensor& x, Tensor& y, TaskPool* pool) : FastOp(y), x_(x), pool_(pool) {}

  Status run() override {
    const float* x = x_.data<float>();
    float* y = out();
    const size_t n = static_cast<size_t>(x_.num_elements());
    static const ActivationPass silu = ActivationPass::silu();
    parallel_tasks(pool_, (n + kBlock - 1) / kBlock, kFlopsPerElement * static_cast<double>(n), [&](size_t b) {
      const size_t begin = b * kBlock;
      silu.run(x + begin, y + begin, static_cast<int64_t>(std::min(kBlock, n - begin)));
    });
    return Status::ok();
  }

 private:
  const Tensor& x_;
  TaskPool* pool_;
};

bool static_f32(const Value& v) { return v.type_known && v.type.is_static() && v.type.dtype == DType::kFloat32; }

bool is_graph_output(const Graph& graph, ValueId v) {
  const auto& outs = graph.outputs();
  return std::find(outs.begin(), outs.end(), v) != outs.end();
}

// The SiLU whose Sigmoid is node `n`, if it is one.
std::optional<SiluGroup> match_silu(const Graph& graph, NodeId n) {
  const Node& sig = graph.node(n);
  if (sig.op != "Sigmoid" || sig.inputs.size() != 1 || sig.outputs.size() != 1) return std::nullopt;
  const ValueId x = sig.inputs[0], s = sig.outputs[0];
  if (graph.value(x).is_constant() || !static_f32(graph.value(x)) || !static_f32(graph.value(s))) return std::nullopt;
  if (is_graph_output(graph, s)) return std::nullopt;
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
  if (is_graph_output(graph, x)) return std::nullopt;
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
  return std::unique_ptr<FastOp>(new Silu(ctx.tensor_of(group.x), ctx.tensor_of(group.output), ctx.pool));
}

}  // namespace hetsched::cpu::fast
