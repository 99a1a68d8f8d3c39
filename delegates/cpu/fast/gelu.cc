// Gelu (approximate "none") and Erf: one vectorised pass each
// (activation_pass.h), split over the pool.
#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

namespace {

// Rough flops per element of the rational erf, for parallel_tasks.
constexpr double kFlopsPerElement = 30;

Status supports_f32_unary(const Graph& graph, const Node& node) {
  const Value& x = graph.value(node.inputs[0]);
  if (x.is_constant()) return unsupported("the input is a constant");
  if (x.type.dtype != DType::kFloat32) return unsupported("not f32");
  return Status::ok();
}

Status supports_gelu(const Graph& graph, const Node& node) {
  const Result<std::string> approximate = node.attrs.get_string("approximate", "none");
  if (!approximate.is_ok()) return approximate.status();
  if (approximate.value() != "none") return unsupported("approximate tanh: the fast kernel is the erf form");
  return supports_f32_unary(graph, node);
}

template <bool Gelu>
Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  return make_activation_op(ctx.input(0), ctx.output(0), ctx.pool, Gelu ? ActivationPass::gelu() : ActivationPass::erf(),
                            kFlopsPerElement);
}

}  // namespace

FastOpKind gelu_kind() { return {"Gelu", false, supports_gelu, create<true>}; }
FastOpKind erf_kind() { return {"Erf", false, supports_f32_unary, create<false>}; }

}  // namespace hetsched::cpu::fast
