// LayerNormalization over the trailing dims from `axis` on, in f32 (the
// portable kernel accumulates in double; over a transformer's few hundred
// channels f32 partial sums in 16 lanes stay within 1e-6 of it): per row a
// sum, a sum of centred squares, then one multiply-add per element.
#include <cmath>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/vector_math.h"
#include "graph/op_schema.h"

namespace hetsched::cpu::fast {

namespace {

constexpr int64_t kRowsPerTask = 8;
// Work per element, in parallel_tasks' units (~1 per flop): three passes
// over the row and a store to a buffer that is often cold. 8 (the flops)
// kept BERT-base's [128, 768] LayerNorms on one thread at 2 threads, 60 us
// each, more than ten times the threshold's ~5 us.
constexpr double kWorkPerElement = 32;

HETSCHED_FAST_INLINE void normalize_rows(const float* x, float* y, int64_t rows, int64_t d, const float* scale,
                                         const float* bias, float epsilon) {
  for (int64_t r = 0; r < rows; ++r, x += d, y += d) {
    const float mean = lane_sum(x, d, [](auto v) { return v; }) / static_cast<float>(d);
    const float var = lane_sum(x, d, [mean](auto v) { return (v - mean) * (v - mean); }) / static_cast<float>(d);
    const float inv_std = 1.f / std::sqrt(var + epsilon);
    if (bias) {
      for (int64_t i = 0; i < d; ++i) y[i] = (x[i] - mean) * inv_std * scale[i] + bias[i];
    } else {
      for (int64_t i = 0; i < d; ++i) y[i] = (x[i] - mean) * inv_std * scale[i];
    }
  }
}

class LayerNorm final : public FastOp {
 public:
  LayerNorm(const Tensor& x, const Tensor& scale, const Tensor* bias, Tensor& y, int64_t d, float epsilon,
            TaskPool* pool)
      : FastOp(y), x_(x), scale_(scale), bias_(bias), d_(d), epsilon_(epsilon), pool_(pool) {}

  Status run() override {
    const int64_t rows = d_ == 0 ? 0 : x_.num_elements() / d_;
    const float* x = x_.data<float>();
    float* y = out();
    const float* scale = scale_.data<float>();
    const float* bias = bias_ ? bias_->data<float>() : nullptr;
    static const auto fn = Clones<normalize_rows>::best();
    const size_t tasks = static_cast<size_t>((rows + kRowsPerTask - 1) / kRowsPerTask);
    parallel_tasks(pool_, tasks, kWorkPerElement * static_cast<double>(rows * d_), [&](size_t t) {
      const int64_t r0 = static_cast<int64_t>(t) * kRowsPerTask;
      const int64_t n = std::min(kRowsPerTask, rows - r0);
      fn(x + r0 * d_, y + r0 * d_, n, d_, scale, bias, epsilon_);
    });
    return Status::ok();
  }

 private:
  const Tensor& x_;
  const Tensor& scale_;
  const Tensor* bias_;
  int64_t d_;
  float epsilon_;
  TaskPool* pool_;
};

// The normalised row length: the product of X's dims from `axis` on.
Result<int64_t> row_length(const Graph& graph, const Node& node) {
  const Shape& shape = graph.value(node.inputs[0]).type.shape;
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, node.attrs.get_int("axis", -1));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(shape.size())));
  int64_t d = 1;
  for (size_t i = static_cast<size_t>(axis); i < shape.size(); ++i) d *= shape[i];
  return d;
}

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] != kNoValue) return unsupported("Mean or InvStdDev is wanted; the fast kernel writes Y only");
  const Value& x = graph.value(node.inputs[0]);
  if (x.is_constant() || x.type.dtype != DType::kFloat32 || !x.type.is_static())
    return unsupported("X is not a static f32 run-time value");
  HS_ASSIGN_OR_RETURN(const int64_t d, row_length(graph, node));
  // Scale and B must be one value per normalised element (no broadcast
  // within the row), in f32.
  for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const Value& p = graph.value(node.inputs[i]);
    if (p.type.dtype != DType::kFloat32 || !p.type.is_static() || p.type.num_elements() != d)
      return unsupported("Scale or B broadcasts within a row");
  }
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  HS_ASSIGN_OR_RETURN(const int64_t d, row_length(ctx.graph, ctx.node));
  HS_ASSIGN_OR_RETURN(const float epsilon, ctx.node.attrs.get_float("epsilon", 1e-5f));
  const bool has_bias = ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue;
  return std::unique_ptr<FastOp>(new LayerNorm(ctx.input(0), ctx.input(1), has_bias ? &ctx.input(2) : nullptr,
                                               ctx.output(0), d, epsilon, ctx.pool));
}

}  // namespace

FastOpKind layer_norm_kind() { return {"LayerNormalization", false, supports, create}; }

}  // namespace hetsched::cpu::fast
