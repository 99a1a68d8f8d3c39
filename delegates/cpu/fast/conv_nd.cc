// Convs over 3 or more spatial dims (video and volume models: r3d, (2+1)D,
// 3-D U-Nets), which XNNPACK has no operator for, on the fast GEMM in the
// graph's order: per image and group, C[M x P] = W[M x K] . X[K x P] with
// K = Cin/group x taps and P the output voxels. A task takes a block of up
// to 64 voxels, packs their patches straight into the GEMM's panels
// (gemm.h: K rows of 16 voxels each) and multiplies the group's weights by
// them; the bias and the fused activation follow on the block's rows while
// they are in cache. The portable kernel (kernels/conv.cc) stays the oracle.
#include <algorithm>
#include <memory>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/kernel.h"
#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

namespace {

constexpr int64_t kTasksPerThread = 4;
constexpr int64_t kMinSliceRows = 12;  // two of the micro-kernel's row tiles

// The window of a Conv node, read as the portable kernel reads it.
Result<WindowGeometryNd> geometry(const Graph& graph, const Node& node) {
  const KernelContext ctx{node, {}, {}, graph.opset()};
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& w = graph.value(node.inputs[1]).type.shape;
  return window_geometry_nd(ctx, x, std::vector<int64_t>(w.begin() + 2, w.end()),
                            graph.value(node.outputs[0]).type.shape, false);
}

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
  if (node.inputs.size() < 2) return unsupported("Conv without weights");
  const Value& x = graph.value(node.inputs[0]);
  if (!x.type_known || !x.type.is_static() || x.type.dtype != DType::kFloat32 || x.type.rank() < 5)
    return unsupported("the fast N-D conv takes static f32 inputs of 3 or more spatial dims");
  for (size_t i = 1; i < node.inputs.size(); ++i)
    if (node.inputs[i] != kNoValue && !graph.value(node.inputs[i]).is_constant())
      return unsupported("weights and bias must be constants");
  HS_RETURN_IF_ERROR(read_fused_activation(node.attrs).status());
  return geometry(graph, node).status();
}

class ConvNd final : public FastOp {
 public:
  ConvNd(const FastOpContext& ctx, WindowGeometryNd g, FusedActivation activation)
      : FastOp(ctx.output(0)), x_(ctx.input(0)), g_(std::move(g)), activation_(activation), pool_(ctx.pool) {
    const Tensor& w = ctx.input(1);
    const Shape& xs = x_.shape();
    batch_ = xs[0];
    channels_ = xs[1];
    out_channels_ = w.shape()[0];
    group_ = ctx.node.attrs.get_int("group", 1).value_or(1);
    taps_ = 1;
    for (size_t d = 0; d < g_.dims(); ++d) {
      taps_ *= g_.kernel[d];
      in_volume_ *= g_.in[d];
      voxels_ *= g_.out[d];
    }
    depth_ = channels_ / group_ * taps_;
    // W is [M, Cin/group, taps...]: already M rows of K, the packed rows' order.
    weights_.assign(w.data<float>(), w.data<float>() + w.num_elements());
    if (ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue) {
      const Tensor& b = ctx.input(2);
      bias_.assign(b.data<float>(), b.data<float>() + b.num_elements());
    }
    blocks_ = (voxels_ + kBlockColumns - 1) / kBlockColumns;
    // A deep layer has few voxels and many channels (r3d_18's last stage:
    // 49 voxels, one block, 512 channels): its output channels are split too,
    // each slice packing the block again, so that every thread gets work.
    const int64_t threads = pool_ ? static_cast<int64_t>(pool_->threads()) : 1;
    const int64_t base = batch_ * group_ * blocks_, want = kTasksPerThread * threads;
    slices_ = std::clamp<int64_t>((want + base - 1) / base, 1, std::max<int64_t>(1, out_channels_ / group_ / kMinSliceRows));
    // Each voxel's first input coordinate per dim, and each tap's offset.
    const size_t nsp = g_.dims();
    origin_.resize(static_cast<size_t>(voxels_) * nsp);
    for (int64_t v = 0; v < voxels_; ++v)
      for (int64_t rest = v, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
        const size_t u = static_cast<size_t>(d);
        origin_[static_cast<size_t>(v) * nsp + u] = rest % g_.out[u] * g_.stride[u] - g_.begin[u];
        rest /= g_.out[u];
      }
    offset_.resize(static_cast<size_t>(taps_) * nsp);
    for (int64_t t = 0; t < taps_; ++t)
      for (int64_t rest = t, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
        const size_t u = static_cast<size_t>(d);
        offset_[static_cast<size_t>(t) * nsp + u] = rest % g_.kernel[u] * g_.dilation[u];
        rest /= g_.kernel[u];
      }
  }

  Status run() override {
    const int64_t tasks = batch_ * group_ * blocks_ * slices_;
    const double work = 2.0 * static_cast<double>(out_channels_ * depth_ * voxels_ * batch_);
    parallel_tasks(pool_, static_cast<size_t>(tasks), work, [this](size_t t) { block(static_cast<int64_t>(t)); });
    return Status::ok();
  }

 private:
  void block(int64_t task) {
    const int64_t slice = task % slices_;
    task /= slices_;
    const int64_t b = task % blocks_, gi = task / blocks_ % group_, n = task / blocks_ / group_;
    const int64_t v0 = b * kBlockColumns, count = std::min(kBlockColumns, voxels_ - v0);
    const int64_t group_channels = channels_ / group_, group_out = out_channels_ / group_;
    thread_local AlignedBuffer panels;
    const size_t bytes = static_cast<size_t>(depth_ * kBlockColumns) * sizeof(float);
    if (panels.size() < bytes) panels = AlignedBuffer::uninitialized(bytes);
    float* p = reinterpret_cast<float*>(panels.data());
    pack(x_.data<float>() + (n * channels_ + gi * group_channels) * in_volume_, group_channels, v0, count, p);
    const int64_t per_slice = (group_out + slices_ - 1) / slices_;
    const int64_t m0 = slice * per_slice, rows = std::min(per_slice, group_out - m0);
    if (rows <= 0) return;
    const int64_t first_out = gi * group_out + m0;
    float* y = out() + (n * out_channels_ + first_out) * voxels_ + v0;
    gemm_block(rows, depth_, count, weights_.data() + first_out * depth_, depth_, p, Epilogue{}, y, voxels_);
    if (bias_.empty() && activation_.kind == FusedActivation::Kind::kNone) return;
    for (int64_t m = 0; m < rows; ++m) {
      float* row = y + m * voxels_;
      const float bias = bias_.empty() ? 0.f : bias_[static_cast<size_t>(first_out + m)];
      for (int64_t j = 0; j < count; ++j) row[j] = activation_.apply(row[j] + bias);
    }
  }

  // The patches of voxels [v0, v0 + count) as panels of 16 voxels: row
  // c x taps + t of panel q holds tap t of channel c for voxels 16q.. of
  // the block, zero past the input and past the block's last voxel.
  void pack(const float* x, int64_t group_channels, int64_t v0, int64_t count, float* panels) const {
    const size_t nsp = g_.dims();
    const int64_t used = (count + kPanel - 1) / kPanel;
    for (int64_t q = 0; q < used; ++q) {
      float* panel = panels + q * depth_ * kPanel;
      const int64_t j0 = q * kPanel, width = std::min(kPanel, count - j0);
      for (int64_t t = 0; t < taps_; ++t) {
        const int64_t* off = offset_.data() + static_cast<size_t>(t) * nsp;
        // Each voxel's input index for this tap (-1 where it reads padding),
        // shared by every channel.
        int64_t index[kPanel];
        for (int64_t j = 0; j < kPanel; ++j) {
          index[j] = -1;
          if (j >= width) continue;
          const int64_t* o = origin_.data() + static_cast<size_t>(v0 + j0 + j) * nsp;
          int64_t at = 0;
          bool inside = true;
          for (size_t d = 0; d < nsp && inside; ++d) {
            const int64_t i = o[d] + off[d];
            inside = i >= 0 && i < g_.in[d];
            at = at * g_.in[d] + i;
          }
          if (inside) index[j] = at;
        }
        // A stride-1 tap's 16 voxels along one input row read 16
        // consecutive floats: one copy per channel, not 16 lookups (a
        // (3, 1, 1) conv spent more time packing than multiplying).
        bool run = width == kPanel && index[0] >= 0;
        for (int64_t j = 0; j < kPanel && run; ++j) run = index[j] == index[0] + j;
        for (int64_t c = 0; c < group_channels; ++c) {
          const float* volume = x + c * in_volume_;
          float* row = panel + (c * taps_ + t) * kPanel;
          if (run) {
            std::copy(volume + index[0], volume + index[0] + kPanel, row);
            continue;
          }
          for (int64_t j = 0; j < kPanel; ++j) row[j] = index[j] >= 0 ? volume[index[j]] : 0.f;
        }
      }
    }
  }

  const Tensor& x_;
  WindowGeometryNd g_;
  FusedActivation activation_;
  TaskPool* pool_;
  int64_t batch_ = 0, channels_ = 0, out_channels_ = 0, group_ = 1;
  int64_t taps_ = 1, in_volume_ = 1, voxels_ = 1, depth_ = 0, blocks_ = 0, slices_ = 1;
  std::vector<float> weights_, bias_;
  std::vector<int64_t> origin_, offset_;
};

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  if (ctx.nhwc) return invalid_argument("the fast N-D conv runs in the graph's order only");
  HS_ASSIGN_OR_RETURN(WindowGeometryNd g, geometry(ctx.graph, ctx.node));
  HS_ASSIGN_OR_RETURN(const FusedActivation activation, read_fused_activation(ctx.node.attrs));
  return std::unique_ptr<FastOp>(new ConvNd(ctx, std::move(g), activation));
}

}  // namespace

FastOpKind conv_nd_kind() { return {"Conv", false, supports, create}; }

}  // namespace hetsched::cpu::fast
