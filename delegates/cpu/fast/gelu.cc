// Gelu (approximate "none" or "tanh") and Erf: one vectorised pass each
// (activation_pass.h), split over the pool.
#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

namespace {

// Rough flops per element of the rational erf, for parallel_tasks.
constexpr double kFlopsPerElement = 30;

Status supports_f32_unary(const Graph& graph, const Node& node, int /*threads*/) {
  const Value& x = graph.value(node.inputs[0]);
  if (x.is_constant()) return unsupported("the input is a constant");
  if (x.type.dtype != DType::kFloat32) return unsupported("not f32");
  return Status::ok();
}

// Whether a Gelu takes the tanh form (approximate "tanh"), or an error
// naming what is accepted.
Result<bool> tanh_form(const Node& node) {
  const Result<std::string> approximate = node.attrs.get_string("approximate", "none");
  if (!approximate.is_ok()) return approximate.status();
  if (approximate.value() != "none" && approximate.value() != "tanh")
    return unsupported("approximate '" + approximate.value() + "' (none and tanh are)");
  return approximate.value() == "tanh";
}

Status supports_gelu(const Graph& graph, const Node& node, int threads) {
  HS_RETURN_IF_ERROR(tanh_form(node).status());
  return supports_f32_unary(graph, node, threads);
}

template <bool Gelu>
Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  ActivationPass pass = ActivationPass::erf();
  if (Gelu) {
    HS_ASSIGN_OR_RETURN(const bool tanh, tanh_form(ctx.node));
    pass = tanh ? ActivationPass::gelu_tanh() : ActivationPass::gelu();
  }
  return make_activation_op(ctx.input(0), ctx.output(0), ctx.pool, pass, kFlopsPerElement);
}

}  // namespace

FastOpKind gelu_kind() { return {"Gelu", false, supports_gelu, create<true>}; }
FastOpKind erf_kind() { return {"Erf", false, supports_f32_unary, create<false>}; }

}  // namespace hetsched::cpu::fast
