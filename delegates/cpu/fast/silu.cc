#include "delegates/cpu/fast/silu.h"

#include <algorithm>

#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

constexpr size_t kBlock = 4096;
// Rough flops per element (exp's polynomial and a divide), for parallel_tasks.
constexpr double kFlopsPerElement = 20;

HETSCHED_FAST_INLINE void silu_body(const float* x, float* y, size_t n) {
  // exp_approx saturates at 2^128 for x below -88, so x / (1 + e) is -0,
  // not NaN, for large negative x.
  for (size_t i = 0; i < n; ++i) y[i] = x[i] / (1.f + exp_approx(-x[i]));
}

class Silu final : public FastOp {
 public:
  Silu(const Tensor& x, Tensor& y, TaskPool* pool) : FastOp(y), x_(x), pool_(pool) {}

  Status run() override {
    const float* x = x_.data<float>();
    float* y = out();
    const size_t n = static_cast<size_t>(x_.num_elements());
    static const auto fn = Clones<silu_body>::best();
    parallel_tasks(pool_, (n + kBlock - 1) / kBlock, kFlopsPerElement * static_cast<double>(n), [&](size_t b) {
      const size_t begin = b * kBlock;
      fn(x + begin, y + begin, std::min(kBlock, n - begin));
    });
    return Status::ok();
  }

 private:
  const Tensor& x_;
  TaskPool* pool_;
};

bool static_f32(const Value& v) { return v.type_known && v.type.is_static() && v.type.dtype == DType::kFloat32; }

}  // namespace

std::vector<SiluGroup> find_silu_groups(const Graph& graph) {
  std::vector<SiluGroup> groups;
  const auto& graph_outputs = graph.outputs();
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    const Node& sig = graph.node(n);
    if (sig.op != "Sigmoid" || sig.inputs.size() != 1 || sig.outputs.size() != 1) continue;
    const ValueId x = sig.inputs[0], s = sig.outputs[0];
    if (graph.value(x).is_constant() || !static_f32(graph.value(x)) || !static_f32(graph.value(s))) continue;
    if (std::find(graph_outputs.begin(), graph_outputs.end(), s) != graph_outputs.end()) continue;
    const std::vector<NodeId> readers = graph.consumers(s);
    if (readers.size() != 1) continue;
    const Node& mul = graph.node(readers[0]);
    if (mul.op != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    const bool pair = (mul.inputs[0] == x && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == x);
    if (!pair || !static_f32(graph.value(mul.outputs[0]))) continue;
    if (graph.value(mul.outputs[0]).type.shape != graph.value(x).type.shape) continue;
    groups.push_back({n, readers[0], x, mul.outputs[0]});
  }
  return groups;
}

Result<std::unique_ptr<FastOp>> make_silu(const FastOpContext& ctx, const SiluGroup& group) {
  return std::unique_ptr<FastOp>(new Silu(ctx.tensor_of(group.x), ctx.tensor_of(group.output), ctx.pool));
}

}  // namespace hetsched::cpu::fast
