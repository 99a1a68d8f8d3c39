// Swish: one pass of x / (1 + exp(-alpha x)) with the polynomial exp of
// vector_math.h, split over the pool in blocks of kBlock elements.
#include "delegates/cpu/fast/swish.h"

#include <algorithm>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

constexpr size_t kBlock = 4096;
// Rough flops per element (the exp polynomial and a division), for parallel_tasks.
constexpr double kFlopsPerElement = 20;

HETSCHED_FAST_INLINE void swish_block(const float* x, float* y, size_t n, float alpha) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] / (1.f + exp_approx(-alpha * x[i]));
}

class Swish final : public FastOp {
 public:
  Swish(const Tensor& x, Tensor& y, float alpha, pthreadpool_t pool) : FastOp(y), x_(x), alpha_(alpha), pool_(pool) {}

  Status run() override {
    swish(x_.data<float>(), out(), static_cast<size_t>(x_.num_elements()), alpha_, pool_);
    return Status::ok();
  }

 private:
  const Tensor& x_;
  float alpha_;
  pthreadpool_t pool_;
};

Status supports(const Graph& graph, const Node& node) {
  const Value& x = graph.value(node.inputs[0]);
  if (x.is_constant()) return unsupported("the input is a constant");
  if (x.type.dtype != DType::kFloat32) return unsupported("not f32");
  return node.attrs.get_float("alpha", 1.f).status();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  HS_ASSIGN_OR_RETURN(const float alpha, ctx.node.attrs.get_float("alpha", 1.f));
  return std::unique_ptr<FastOp>(new Swish(ctx.input(0), ctx.output(0), alpha, ctx.pool));
}

}  // namespace

void swish(const float* x, float* y, size_t n, float alpha, pthreadpool_t pool) {
  static const auto fn = Clones<swish_block>::best();
  parallel_tasks(pool, (n + kBlock - 1) / kBlock, kFlopsPerElement * static_cast<double>(n), [&](size_t b) {
    const size_t begin = b * kBlock;
    fn(x + begin, y + begin, std::min(kBlock, n - begin), alpha);
  });
}

FastOpKind swish_kind() { return {"Swish", false, supports, create}; }

}  // namespace hetsched::cpu::fast
