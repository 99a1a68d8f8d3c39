// Gelu (approximate "none") and Erf: one vectorised pass each, split over
// the pool in blocks of kBlock elements.
#include <algorithm>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

constexpr size_t kBlock = 4096;
// Rough flops per element of the rational erf, for parallel_tasks.
constexpr double kFlopsPerElement = 30;

template <bool Gelu>
HETSCHED_FAST_INLINE void apply(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = Gelu ? gelu_erf(x[i]) : erf_approx(x[i]);
}

template <bool Gelu>
class Unary final : public FastOp {
 public:
  Unary(const Tensor& x, Tensor& y, TaskPool* pool) : FastOp(y), x_(x), pool_(pool) {}

  Status run() override {
    const float* x = x_.data<float>();
    float* y = out();
    const size_t n = static_cast<size_t>(x_.num_elements());
    static const auto fn = Clones<apply<Gelu>>::best();
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
  return std::unique_ptr<FastOp>(new Unary<Gelu>(ctx.input(0), ctx.output(0), ctx.pool));
}

}  // namespace

FastOpKind gelu_kind() { return {"Gelu", false, supports_gelu, create<true>}; }
FastOpKind erf_kind() { return {"Erf", false, supports_f32_unary, create<false>}; }

}  // namespace hetsched::cpu::fast
