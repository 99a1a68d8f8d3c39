#include "delegates/cpu/fast/channel_affine.h"

#include <algorithm>
#include <limits>

#include "delegates/cpu/fast/vector_math.h"
#include "delegates/cpu/xnnpack/nhwc_ops.h"
#include "delegates/cpu/xnnpack/op_params.h"
#include "delegates/cpu/xnnpack/segment_plan.h"

namespace hetsched::cpu::fast {

namespace {

// Rows of `pixels` x `c` floats, x's `ldx` and y's `ldy` floats apart:
// y = clamp(x * s + t) per channel. Ternaries on values, not std::min/max:
// GCC vectorises the inner loop, and a NaN passes through as the portable
// kernels let it.
HETSCHED_FAST_INLINE void affine_rows(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t pixels, int64_t c,
                                      const float* s, const float* t, float lo, float hi) {
  for (int64_t p = 0; p < pixels; ++p, x += ldx, y += ldy)
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

// What the op reads: its input, or each piece of the Concat it takes in,
// with the first output channel each piece fills.
struct Piece {
  const Tensor* x;
  int64_t channels, first;
};

class AffineOp final : public FastOp {
 public:
  AffineOp(std::vector<Piece> pieces, Tensor& y, std::vector<float> scale, std::vector<float> shift, float lo,
           float hi, bool nhwc, TaskPool* pool)
      : FastOp(y),
        shape_(y.type().shape),
        pieces_(std::move(pieces)),
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
    const int64_t elements = shape_elements(shape_), pixels = elements / c;
    // Tasks of about 16K elements, each a run of pixels over every piece.
    const int64_t per_task = std::max<int64_t>(1, (16 << 10) / c);
    const int64_t tasks = (pixels + per_task - 1) / per_task;
    float* y = out();
    parallel_tasks(pool_, static_cast<size_t>(tasks), static_cast<double>(elements) * 2, [&](size_t i) {
      const int64_t p0 = static_cast<int64_t>(i) * per_task, n = std::min(per_task, pixels - p0);
      for (const Piece& piece : pieces_)
        rows(piece.x->data<float>() + p0 * piece.channels, piece.channels, y + p0 * c + piece.first, c, n,
             piece.channels, scale_.data() + piece.first, shift_.data() + piece.first, lo_, hi_);
    });
    return Status::ok();
  }

 private:
  // The graph's order, where a plan that fell back from NHWC steps runs it
  // (drop_nhwc_steps): a task per run of channel planes.
  // A Concat's pieces go plane run by plane run too: output plane q (of
  // image n, channel ch) comes from piece plane (n, ch - first).
  Status run_planes() {
    static const auto planes_fn = Clones<affine_planes>::best();
    const int64_t c = static_cast<int64_t>(scale_.size());
    const int64_t size = shape_[2] * shape_[3];
    const int64_t planes = shape_elements(shape_) / size;
    const int64_t per_task = std::max<int64_t>(1, (16 << 10) / std::max<int64_t>(1, size));
    const int64_t tasks = (planes + per_task - 1) / per_task;
    float* y = out();
    parallel_tasks(pool_, static_cast<size_t>(tasks), static_cast<double>(planes * size) * 2, [&](size_t i) {
      const int64_t q0 = static_cast<int64_t>(i) * per_task, q1 = std::min(planes, q0 + per_task);
      for (int64_t q = q0; q < q1;) {
        // The run of planes from q inside one image and one piece.
        const int64_t n = q / c, ch = q % c;
        const Piece& piece = piece_of(ch);
        const int64_t run = std::min(q1 - q, piece.first + piece.channels - ch);
        const float* x = piece.x->data<float>() + (n * piece.channels + ch - piece.first) * size;
        planes_fn(x, y + q * size, run, size, ch, c, scale_.data(), shift_.data(), lo_, hi_);
        q += run;
      }
    });
    return Status::ok();
  }

  const Piece& piece_of(int64_t channel) const {
    for (const Piece& p : pieces_)
      if (channel < p.first + p.channels) return p;
    return pieces_.back();
  }

  Shape shape_;  // the output's (N, C, H, W)
  std::vector<Piece> pieces_;
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
  std::vector<NodeId> nodes;
  if (concat != kNoNode) nodes.push_back(concat);
  nodes.push_back(norm);
  if (clamp != kNoNode) nodes.push_back(clamp);
  return nodes;
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
    AffineGroup g{n, kNoNode, x, y, kNoNode, {}};
    const NodeId producer = graph.value(x).producer;
    if (producer != kNoNode && graph.node(producer).op == "Concat" && !graph.is_output(x) &&
        graph.consumers(x).size() == 1 && xnnpack::nhwc_kernel_supports(graph, graph.node(producer)).is_ok()) {
      const std::vector<ValueId>& ins = graph.node(producer).inputs;
      if (std::none_of(ins.begin(), ins.end(), [&](ValueId v) { return xnnpack::is_island_input(graph, v); })) {
        g.concat = producer;
        g.pieces = ins;
      }
    }
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
  std::vector<Piece> pieces;
  if (group.concat == kNoNode) {
    pieces.push_back({&ctx.tensor_of(group.x), ctx.graph.value(group.x).type.shape[1], 0});
  } else {
    int64_t first = 0;
    for (ValueId v : group.pieces) {
      const int64_t channels = ctx.graph.value(v).type.shape[1];
      pieces.push_back({&ctx.tensor_of(v), channels, first});
      first += channels;
    }
  }
  return std::unique_ptr<FastOp>(std::make_unique<AffineOp>(std::move(pieces), ctx.tensor_of(group.output),
                                                            std::move(a.scale), std::move(a.shift), lo, hi,
                                                            ctx.nhwc, ctx.pool));
}

}  // namespace hetsched::cpu::fast
