// Softmax over the trailing dims (opset 13+: the last axis; before: every
// axis from `axis` on): per row a max, exp(x - max) with its sum in one
// pass, then one multiply. XNNPACK runs softmax too, but alone in a segment
// (as attention places it, between two batched MatMuls) it pays the
// segment's staging copy and took 12 us on a 4x64x64 map against 3 here.
#include "delegates/cpu/fast/avx512_math.h"
#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/vector_math.h"
#include "graph/op_schema.h"

namespace hetsched::cpu::fast {

namespace {

// Four passes over a row that stays in L1: each is a plain loop that GCC
// vectorises at the full width (one fused pass vectorised at 8 lanes only).
HETSCHED_FAST_INLINE void softmax_rows(const float* __restrict x, float* __restrict y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    const float max = lane_max(x, n);
    for (int64_t i = 0; i < n; ++i) y[i] = exp_approx(x[i] - max);
    const float inv = 1.f / lane_sum(y, n, [](auto v) { return v; });
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

#if defined(__x86_64__)
// The same with the exp on AVX-512 intrinsics (avx512_math.h).
HETSCHED_AVX512 HETSCHED_FAST_INLINE void softmax_rows_avx512(const float* __restrict x, float* __restrict y,
                                                              int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
    const __m512 max = _mm512_set1_ps(lane_max(x, n));
    for (int64_t i = 0; i < n; i += 16) {
      const __mmask16 part = first_lanes(n - i);
      _mm512_mask_storeu_ps(y + i, part, exp512<1>(_mm512_sub_ps(_mm512_maskz_loadu_ps(part, x + i), max)));
    }
    const float inv = 1.f / lane_sum(y, n, [](auto v) { return v; });
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}
#else
HETSCHED_FAST_INLINE void softmax_rows_avx512(const float* __restrict x, float* __restrict y, int64_t rows, int64_t n) {
  softmax_rows(x, y, rows, n);
}
#endif

class Softmax final : public FastOp {
 public:
  Softmax(const Tensor& x, Tensor& y, int64_t n, TaskPool* pool) : FastOp(y), x_(x), n_(n), pool_(pool) {}

  Status run() override {
    const int64_t rows = x_.num_elements() / n_;
    const float* x = x_.data<float>();
    float* y = out();
    static const auto fn = Clones<softmax_rows, softmax_rows_avx512>::best();
    const int64_t per_task = std::max<int64_t>(1, 4096 / n_);
    const size_t tasks = static_cast<size_t>((rows + per_task - 1) / per_task);
    parallel_tasks(pool_, tasks, 30.0 * static_cast<double>(rows * n_), [&](size_t t) {
      const int64_t r0 = static_cast<int64_t>(t) * per_task;
      fn(x + r0 * n_, y + r0 * n_, std::min(per_task, rows - r0), n_);
    });
    return Status::ok();
  }

 private:
  const Tensor& x_;
  int64_t n_;
  TaskPool* pool_;
};

// Elements per normalised row.
Result<int64_t> row_length(const Graph& graph, const Node& node) {
  const Shape& shape = graph.value(node.inputs[0]).type.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, node.attrs.get_int("axis", graph.opset() >= 13 ? -1 : 1));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, rank));
  if (graph.opset() >= 13 && axis != rank - 1) return unsupported("axis is not the last");
  int64_t n = 1;
  for (int64_t i = axis; i < rank; ++i) n *= shape[static_cast<size_t>(i)];
  return n;
}

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
  const Value& x = graph.value(node.inputs[0]);
  if (x.is_constant() || x.type.dtype != DType::kFloat32 || !x.type.is_static() || x.type.rank() == 0)
    return unsupported("X is not a static f32 run-time value");
  HS_ASSIGN_OR_RETURN(const int64_t n, row_length(graph, node));
  if (n == 0) return unsupported("empty rows");
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  HS_ASSIGN_OR_RETURN(const int64_t n, row_length(ctx.graph, ctx.node));
  return std::unique_ptr<FastOp>(new Softmax(ctx.input(0), ctx.output(0), n, ctx.pool));
}

}  // namespace

FastOpKind softmax_kind() { return {"Softmax", true, supports, create}; }

}  // namespace hetsched::cpu::fast
