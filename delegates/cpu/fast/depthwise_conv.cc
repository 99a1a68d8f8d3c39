// Depthwise Conv (group == C == M) with a kernel size this XNNPACK snapshot
// has no depthwise micro-kernel for. Its x86 build has them for 3, 4, 9 and
// 25 taps only (1x3, 2x2, 3x3, 5x5) and runs any other depthwise conv as a
// grouped GEMM of one channel per group, a 16-wide micro-kernel with one
// useful lane: ConvNeXt's 7x7 depthwise convs ran at ~3 GFLOP/s there
// (9.6 ms for the 56x56x96 one at one thread).
//
// Here, in the graph's order (NCHW), one channel plane at a time: the plane
// is copied once into a zero-bordered scratch plane, then each output row is
// computed in blocks of 64 columns whose accumulators stay in registers
// across all taps (stride 1, any dilation), then bias and the fused
// activation. Planes are split over the pool in chunks, each with its own
// scratch, allocated at init.
#include <algorithm>
#include <cstring>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/vector_math.h"
#include "delegates/cpu/xnnpack/op_params.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

namespace {

// Output columns per register block: 4 AVX-512 vectors (8 AVX2, 16 SSE).
constexpr int64_t kBlock = 64;

// The kernel sizes (taps) this XNNPACK has depthwise micro-kernels for
// (XNNPACK's init.c of 2022-02, x86: up16x3, up16x4, up16x9, up16x25); it
// takes a depthwise conv only when the taps equal one of them.
bool xnnpack_has_depthwise_kernel(int64_t taps) { return taps == 3 || taps == 4 || taps == 9 || taps == 25; }

struct Geometry {
  int64_t kh = 0, kw = 0, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  // The scratch plane: the input with its zero border, each row padded to
  // a whole number of blocks past the last tap any block reads.
  int64_t plane_rows = 0, plane_stride = 0;
};

// acc[0, kBlock) = sum over taps of w * plane[row(tap), x0 + col(tap) + i],
// for output row `oy` (stride 1).
HETSCHED_FAST_INLINE void row_block(const float* plane, int64_t stride, const float* w, int64_t kh, int64_t kw,
                                    int64_t dh, int64_t dw, int64_t oy, int64_t x0, float* acc) {
  float a[kBlock] = {};
  for (int64_t ky = 0; ky < kh; ++ky) {
    const float* src = plane + (oy + ky * dh) * stride + x0;
    for (int64_t kx = 0; kx < kw; ++kx) {
      const float wv = w[ky * kw + kx];
      const float* s = src + kx * dw;
#pragma GCC unroll 64
      for (int64_t i = 0; i < kBlock; ++i) a[i] += wv * s[i];
    }
  }
  std::memcpy(acc, a, sizeof(a));
}

class DepthwiseConv final : public FastOp {
 public:
  DepthwiseConv(const Tensor& x, Tensor& y, const Geometry& g, std::vector<float> filter, std::vector<float> bias,
                FusedActivation activation, int64_t planes, int64_t channels, TaskPool* pool)
      : FastOp(y),
        x_(x),
        g_(g),
        filter_(std::move(filter)),
        bias_(std::move(bias)),
        activation_(activation),
        planes_(planes),
        channels_(channels),
        pool_(pool) {
    const size_t threads = pool ? static_cast<size_t>(pool->threads()) : 1;
    chunks_ = std::min<int64_t>(planes_, static_cast<int64_t>(threads) * 4);
    const size_t plane_floats = static_cast<size_t>(g_.plane_rows * g_.plane_stride);
    // Zeroed once: a chunk rewrites only the input's window, so the border stays zero.
    scratch_.assign(static_cast<size_t>(chunks_) * plane_floats, 0.f);
  }

  Status run() override {
    static const auto block = Clones<row_block>::best();
    const double work = 2.0 * static_cast<double>(planes_ * g_.out_h * g_.out_w * g_.kh * g_.kw);
    parallel_tasks(pool_, static_cast<size_t>(chunks_), work, [&](size_t chunk) {
      const int64_t first = static_cast<int64_t>(chunk) * planes_ / chunks_;
      const int64_t last = static_cast<int64_t>(chunk + 1) * planes_ / chunks_;
      float* plane = scratch_.data() + chunk * static_cast<size_t>(g_.plane_rows * g_.plane_stride);
      for (int64_t p = first; p < last; ++p) run_plane(p, plane, block);
    });
    return Status::ok();
  }

 private:
  template <typename Block>
  void run_plane(int64_t p, float* plane, Block block) const {
    const int64_t c = p % channels_;
    const float* in = x_.data<float>() + p * g_.in_h * g_.in_w;
    for (int64_t y = 0; y < g_.in_h; ++y)
      std::memcpy(plane + (y + g_.pad_top) * g_.plane_stride + g_.pad_left, in + y * g_.in_w,
                  static_cast<size_t>(g_.in_w) * sizeof(float));
    const float* w = filter_.data() + c * g_.kh * g_.kw;
    const float b = bias_[static_cast<size_t>(c)];
    float* out = this->out() + p * g_.out_h * g_.out_w;
    alignas(64) float acc[kBlock];
    for (int64_t oy = 0; oy < g_.out_h; ++oy) {
      float* orow = out + oy * g_.out_w;
      for (int64_t x0 = 0; x0 < g_.out_w; x0 += kBlock) {
        block(plane, g_.plane_stride, w, g_.kh, g_.kw, g_.dh, g_.dw, oy, x0, acc);
        const int64_t n = std::min(kBlock, g_.out_w - x0);
        for (int64_t i = 0; i < n; ++i) orow[x0 + i] = activation_.apply(acc[i] + b);
      }
    }
  }

  const Tensor& x_;
  Geometry g_;
  std::vector<float> filter_;  // [C, kH, kW]
  std::vector<float> bias_;    // [C]
  FusedActivation activation_;
  int64_t planes_;    // N * C
  int64_t channels_;  // C
  TaskPool* pool_;
  int64_t chunks_ = 1;
  std::vector<float> scratch_;  // one plane per chunk
};

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
  const Value& x = graph.value(node.inputs[0]);
  if (x.is_constant()) return unsupported("the input is a constant");
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, xnnpack::read_conv(graph, node));
  if (!p.depthwise || p.out_channels != p.in_channels) return unsupported("not a depthwise conv of one output per channel");
  const xnnpack::Window2d& w = p.window;
  if (xnnpack_has_depthwise_kernel(int64_t{w.kernel_h} * w.kernel_w))
    return unsupported("XNNPACK has a depthwise micro-kernel for this kernel size");
  if (w.stride_h != 1 || w.stride_w != 1) return unsupported("a stride other than 1");
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  HS_RETURN_IF_ERROR(supports(ctx.graph, ctx.node, ctx.threads()));
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, xnnpack::read_conv(ctx.graph, ctx.node));
  HS_ASSIGN_OR_RETURN(const FusedActivation activation, read_fused_activation(ctx.node.attrs));
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const xnnpack::Window2d& w = p.window;
  Geometry g;
  g.kh = w.kernel_h;
  g.kw = w.kernel_w;
  g.dh = w.dilation_h;
  g.dw = w.dilation_w;
  g.pad_top = w.pad_top;
  g.pad_left = w.pad_left;
  g.in_h = x.shape()[2];
  g.in_w = x.shape()[3];
  g.out_h = y.shape()[2];
  g.out_w = y.shape()[3];
  // The last block reads up to column round_up(out_w, kBlock) - 1 + (kw - 1) * dw.
  const int64_t blocks_w = (g.out_w + kBlock - 1) / kBlock * kBlock;
  g.plane_stride = std::max(blocks_w + (g.kw - 1) * g.dw, g.pad_left + g.in_w);
  g.plane_rows = std::max(g.out_h + (g.kh - 1) * g.dh, g.pad_top + g.in_h);
  const Tensor& filter = ctx.input(1);
  std::vector<float> f(filter.data<float>(), filter.data<float>() + filter.num_elements());
  std::vector<float> bias(static_cast<size_t>(p.out_channels), 0.f);
  if (ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue) {
    const Tensor& b = ctx.input(2);
    std::copy(b.data<float>(), b.data<float>() + p.out_channels, bias.begin());
  }
  const int64_t planes = x.shape()[0] * p.in_channels;
  return std::unique_ptr<FastOp>(
      new DepthwiseConv(x, y, g, std::move(f), std::move(bias), activation, planes, p.in_channels, ctx.pool));
}

}  // namespace

bool depthwise_conv_leaves_xnnpack(const Graph& graph, const Node& node) {
  return node.op == "Conv" && supports(graph, node, 1).is_ok();  // its rule has no thread count
}

FastOpKind depthwise_conv_kind() { return {"Conv", false, supports, create}; }

}  // namespace hetsched::cpu::fast
