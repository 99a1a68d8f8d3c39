#include "delegates/cpu/fast/channel_affine.h"

#include <limits>

#include "delegates/cpu/fast/vector_math.h"
#include "delegates/cpu/xnnpack/op_params.h"

namespace hetsched::cpu::fast {

namespace {

// Rows of `pixels` x `c` floats: y = clamp(x * s + t) per channel.
// Ternaries on values, not std::min/max: GCC vectorises the inner loop,
// and a NaN passes through as the portable kernels let it.
HETSCHED_FAST_INLINE void affine_rows(const float* x, float* y, int64_t pixels, int64_t c, const float* s,
                                      const float* t, float lo, float hi) {
  for (int64_t p = 0; p < pixels; ++p, x += c, y += c)
    for (int64_t j = 0; j < c; ++j) {
      float v = x[j] * s[j] + t[j];
      v = v < lo ? lo : v;
      y[j] = v > hi ? hi : v;
    }
}

// Planes of `size` floats, one channel each (the graph's NCHW order):
// y = clamp(x * s + t), channel `first` onwards.
HETSCHED_FAST_INLINE void affine_planes(const float* x, float* y, int64_t planes, int64_t size, int64_t first,
                                        int64_t c, const float* s, const float* t, float lo, float hi) {
  for (int64_t q = 0; q < planes; ++q, x += size, y += size) {
    const int64_t ch = (first + q) % c;
    const float sc = s[ch], sh = t[ch];
    for (int64_t i = 0; i < size; ++i) {
      float v = x[i] * sc + sh;
      v = v < lo ? lo : v;
      y[i] = v > hi ? hi : v;
    }
  }
}

class AffineOp final : public FastOp {
 public:
  AffineOp(const Tensor& x, Tensor& y, std::vector<float> scale, std::vector<float> shift, float lo, float hi,
           bool nhwc, TaskPool* pool)
      : FastOp(y),
        x_(x),
        scale_(std::move(scale)),
        shift_(std::move(shift)),
        lo_(lo),
        hi_(hi),
        nhwc_(nhwc),
        pool_(pool) {}

  Status run() override {
    if (!nhwc_) return run_planes();
    static const auto rows = Clones<affine_rows>::best();
    const int64_t c = static_cast<int64_t>(scale_.size());
    const int64_t pixels = x_.num_elements() / c;
    // Tasks of about 16K elements.
    const int64_t per_task = std::max<int64_t>(1, (16 << 10) / c);
    const int64_t tasks = (pixels + per_task - 1) / per_task;
    const float* x = x_.data<float>();
    float* y = out();
    parallel_tasks(pool_, static_cast<size_t>(tasks), static_cast<double>(x_.num_elements()) * 2, [&](size_t i) {
      const int64_t p0 = static_cast<int64_t>(i) * per_task, n = std::min(per_task, pixels - p0);
      rows(x + p0 * c, y + p0 * c, n, c, scale_.data(), shift_.data(), lo_, hi_);
    });
    return Status::ok();
  }

 private:
  // The graph's order, where a plan that fell back from NHWC steps runs it
  // (drop_nhwc_steps): a task per run of channel planes.
  Status run_planes() {
    static const auto planes_fn = Clones<affine_planes>::best();
    const int64_t c = static_cast<int64_t>(scale_.size());
    const int64_t size = x_.type().shape[2] * x_.type().shape[3];
    const int64_t planes = x_.num_elements() / size;
    const int64_t per_task = std::max<int64_t>(1, (16 << 10) / std::max<int64_t>(1, size));
    const int64_t tasks = (planes + per_task - 1) / per_task;
    const float* x = x_.data<float>();
    float* y = out();
    parallel_tasks(pool_, static_cast<size_t>(tasks), static_cast<double>(x_.num_elements()) * 2, [&](size_t i) {
      const int64_t q0 = static_cast<int64_t>(i) * per_task, n = std::min(per_task, planes - q0);
      planes_fn(x + q0 * size, y + q0 * size, n, size, q0, c, scale_.data(), shift_.data(), lo_, hi_);
    });
    return Status::ok();
  }

  const Tensor& x_;
  std::vector<float> scale_, shift_;
  float lo_, hi_;
  bool nhwc_;
  TaskPool* pool_;
};

bool static_f32_rank4(const Value& v) {
  return v.type_known && v.type.is_static() && v.type.dtype == DType::kFloat32 && v.type.rank() == 4;
}

}  // namespace

std::vector<NodeId> AffineGroup::nodes() const {
  if (clamp == kNoNode) return {norm};
  return {norm, clamp};
}

std::vector<AffineGroup> find_affine_groups(const Graph& graph) {
  std::vector<AffineGroup> groups;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    const Node& bn = graph.node(n);
    if (bn.op != "BatchNormalization" || bn.outputs.size() != 1 || bn.inputs.empty()) continue;
    const ValueId x = bn.inputs[0], y = bn.outputs[0];
    if (graph.value(x).is_constant() || !static_f32_rank4(graph.value(x)) || !static_f32_rank4(graph.value(y)))
      continue;
    if (!xnnpack::read_batch_norm(graph, bn).is_ok()) continue;  // training mode, run-time statistics, ...
    AffineGroup g{n, kNoNode, x, y};
    const std::vector<NodeId> readers = graph.consumers(y);
    if (!graph.is_output(y) && readers.size() == 1) {
      const Node& r = graph.node(readers[0]);
      if ((r.op == "Relu" || r.op == "Clip") && xnnpack::read_clamp(graph, r).is_ok() &&
          graph.value(r.outputs[0]).type == graph.value(y).type) {
        g.clamp = readers[0];
        g.output = r.outputs[0];
      }
    }
    groups.push_back(g);
  }
  return groups;
}

Result<std::unique_ptr<FastOp>> make_affine(const FastOpContext& ctx, const AffineGroup& group) {
  HS_ASSIGN_OR_RETURN(xnnpack::ChannelAffine a, xnnpack::read_batch_norm(ctx.graph, ctx.graph.node(group.norm)));
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (group.clamp != kNoNode) {
    HS_ASSIGN_OR_RETURN(const xnnpack::Clamp c, xnnpack::read_clamp(ctx.graph, ctx.graph.node(group.clamp)));
    lo = c.min;
    hi = c.max;
  }
  return std::unique_ptr<FastOp>(std::make_unique<AffineOp>(ctx.tensor_of(group.x), ctx.tensor_of(group.output),
                                                            std::move(a.scale), std::move(a.shift), lo, hi,
                                                            ctx.nhwc, ctx.pool));
}

}  // namespace hetsched::cpu::fast
