#include "delegates/cpu/fast/depthwise_nhwc.h"

#include <algorithm>
#include <vector>

#include "delegates/cpu/fast/conv_group.h"
#include "delegates/cpu/fast/vector_math.h"
#include "delegates/cpu/xnnpack/op_params.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

namespace {

// The weights' and bias's rows are padded to a multiple of this many
// channels (whole runs of 16 lanes).
constexpr int64_t kRun = 16;
// Filters up to this size (taps x padded channels x 4) run pixel by pixel,
// larger ones run by run of channels along the row (row_body).
constexpr int64_t kSmallFilterBytes = 16 * 1024;

struct Geometry {
  int64_t batch = 0, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0;
  int64_t padded = 0;  // channels rounded up to kRun: the weights' and bias's row length
};

// The taps [first, last) of a window starting at `origin` (stride and pad
// applied) with `count` taps `dilation` apart that land in [0, size).
HETSCHED_FAST_INLINE void inside(int64_t origin, int64_t count, int64_t dilation, int64_t size, int64_t& first,
                                 int64_t& last) {
  first = origin >= 0 ? 0 : (-origin + dilation - 1) / dilation;
  const int64_t end = size - origin;  // taps with origin + t * dilation < size
  last = end <= 0 ? 0 : std::min(count, (end + dilation - 1) / dilation);
  first = std::min(first, last);
}

// out[c] = bias[c] + sum over `rows` x `cols` taps of w[tap][c] *
// x[tap][c] for the V * 16 channels from c, the sums in V registers of 16
// lanes (GCC's generic vectors: one AVX-512 register, two AVX2 ones); `x`
// and `w` point at the first tap inside the input, channel c.
template <int V>
HETSCHED_FAST_INLINE void channels(const Geometry& g, const float* x, const float* w, const float* bias, int64_t rows,
                                   int64_t cols, float* out) {
  Lanes acc[V];
  for (int v = 0; v < V; ++v) acc[v] = load_lanes(bias + v * kLanes);
  for (int64_t ky = 0; ky < rows; ++ky)
    for (int64_t kx = 0; kx < cols; ++kx) {
      const float* xt = x + (ky * g.dh * g.in_w + kx * g.dw) * g.channels;
      const float* wt = w + (ky * g.kw + kx) * g.padded;
      for (int v = 0; v < V; ++v) acc[v] += load_lanes(wt + v * kLanes) * load_lanes(xt + v * kLanes);
    }
  for (int v = 0; v < V; ++v) __builtin_memcpy(out + v * kLanes, &acc[v], sizeof(Lanes));
}

// The taps of one output row inside the input, and where they start.
struct RowTaps {
  const float* image;     // the image's first element
  const int64_t* kx_range;  // per output column: its first and last + 1 column tap inside
  int64_t ky0, ky1;       // the row taps inside
  int64_t iy0;            // the window's first input row (tap 0, maybe in the padding)
};

// Channels [c, c + V * 16) of output columns [ox_first, ox_last).
// (Plain always-inline functions, not lambdas: a lambda's body is not
// compiled for the ISA of the function it sits in, Clones<> below.)
template <int V>
HETSCHED_FAST_INLINE void columns(const Geometry& g, const RowTaps& t, const float* w, const float* bias, int64_t c,
                                  int64_t ox_first, int64_t ox_last, float* out) {
  for (int64_t ox = ox_first; ox < ox_last; ++ox) {
    const int64_t kx0 = t.kx_range[2 * ox], kx1 = t.kx_range[2 * ox + 1];
    const int64_t ix = ox * g.sw - g.pad_left + kx0 * g.dw;
    const float* x = t.image + ((t.iy0 + t.ky0 * g.dh) * g.in_w + ix) * g.channels + c;
    channels<V>(g, x, w + (t.ky0 * g.kw + kx0) * g.padded + c, bias + c, t.ky1 - t.ky0, kx1 - kx0,
                out + ox * g.channels + c);
  }
}

// The runs of 64, 32 and 16 channels over columns [ox_first, ox_last), run
// by run, then the channels left one at a time.
HETSCHED_FAST_INLINE void runs(const Geometry& g, const RowTaps& t, const float* w, const float* bias,
                               int64_t ox_first, int64_t ox_last, float* out) {
  int64_t c = 0;
  for (; c + 4 * kLanes <= g.channels; c += 4 * kLanes) columns<4>(g, t, w, bias, c, ox_first, ox_last, out);
  if (c + 2 * kLanes <= g.channels) {
    columns<2>(g, t, w, bias, c, ox_first, ox_last, out);
    c += 2 * kLanes;
  }
  if (c + kLanes <= g.channels) {
    columns<1>(g, t, w, bias, c, ox_first, ox_last, out);
    c += kLanes;
  }
  for (; c < g.channels; ++c)
    for (int64_t ox = ox_first; ox < ox_last; ++ox) {
      const int64_t kx0 = t.kx_range[2 * ox], kx1 = t.kx_range[2 * ox + 1];
      const int64_t ix = ox * g.sw - g.pad_left + kx0 * g.dw;
      const float* x = t.image + ((t.iy0 + t.ky0 * g.dh) * g.in_w + ix) * g.channels + c;
      const float* wt = w + (t.ky0 * g.kw + kx0) * g.padded + c;
      float acc = bias[c];
      for (int64_t ky = 0; ky < t.ky1 - t.ky0; ++ky)
        for (int64_t kx = 0; kx < kx1 - kx0; ++kx)
          acc += wt[(ky * g.kw + kx) * g.padded] * x[(ky * g.dh * g.in_w + kx * g.dw) * g.channels];
      out[ox * g.channels + c] = acc;
    }
}

// One output row `oy` of image `image`: out[ox][c] = bias[c] + sum over
// the taps inside of w[tap][c] * in[iy][ix][c]. Small filters (3x3 x 96
// channels: 3.5 KB) stay in L1 whatever the order, so each pixel takes all
// its channels while its window is in L1 (a stride-2 row's window is 3
// input rows, more than L1); large ones (5x5 x 672: 67 KB) go run by run
// along the row, so that one run's weights stay in L1 (pixel by pixel
// they streamed from L2 at every pixel: 2x slower on EfficientNet-B0's
// 14x14 5x5s).
HETSCHED_FAST_INLINE void row_body(const Geometry* gp, const int64_t* kx_range, const float* image, const float* w,
                                   const float* bias, int64_t oy, float* out) {
  const Geometry& g = *gp;
  RowTaps t{image, kx_range, 0, 0, oy * g.sh - g.pad_top};
  inside(t.iy0, g.kh, g.dh, g.in_h, t.ky0, t.ky1);
  if (g.kh * g.kw * g.padded * static_cast<int64_t>(sizeof(float)) <= kSmallFilterBytes) {
    for (int64_t ox = 0; ox < g.out_w; ++ox) runs(g, t, w, bias, ox, ox + 1, out);
  } else {
    runs(g, t, w, bias, 0, g.out_w, out);
  }
}

class DepthwiseNhwc final : public FastOp {
 public:
  DepthwiseNhwc(const Tensor& x, Tensor& y, const Geometry& g, std::vector<float> w, std::vector<float> bias,
                ActivationPass post, TaskPool* pool)
      : FastOp(y), x_(x), g_(g), w_(std::move(w)), bias_(std::move(bias)), post_(post), pool_(pool) {
    // Each output column's taps inside the input, worked out once: a
    // division per pixel cost as much as a small conv's sums.
    kx_range_.resize(static_cast<size_t>(2 * g_.out_w));
    for (int64_t ox = 0; ox < g_.out_w; ++ox)
      inside(ox * g_.sw - g_.pad_left, g_.kw, g_.dw, g_.in_w, kx_range_[2 * ox], kx_range_[2 * ox + 1]);
  }

  Status run() override {
    static const auto body = Clones<row_body>::best();
    const int64_t rows = g_.batch * g_.out_h, row_floats = g_.out_w * g_.channels;
    const double work = 2.0 * static_cast<double>(rows * row_floats * g_.kh * g_.kw);
    const float* x = x_.data<float>();
    float* y = out();
    parallel_tasks(pool_, static_cast<size_t>(rows), work, [&](size_t r) {
      const int64_t image = static_cast<int64_t>(r) / g_.out_h, oy = static_cast<int64_t>(r) % g_.out_h;
      float* row = y + static_cast<int64_t>(r) * row_floats;
      body(&g_, kx_range_.data(), x + image * g_.in_h * g_.in_w * g_.channels, w_.data(), bias_.data(), oy, row);
      post_.run(row, row_floats);
    });
    return Status::ok();
  }

 private:
  const Tensor& x_;
  Geometry g_;
  std::vector<float> w_;     // [kh * kw][padded]
  std::vector<float> bias_;  // [padded]
  std::vector<int64_t> kx_range_;  // [out_w][2]: the first and last + 1 column tap inside the input
  ActivationPass post_;
  TaskPool* pool_;
};

}  // namespace

Status depthwise_nhwc_supported(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, read_fast_conv(graph, node));
  if (!p.depthwise || p.out_channels != p.in_channels) return unsupported("not a depthwise conv of one output per channel");
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> make_depthwise_nhwc(const FastOpContext& ctx, ValueId output, ActivationPass post) {
  HS_RETURN_IF_ERROR(depthwise_nhwc_supported(ctx.graph, ctx.node));
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, xnnpack::read_conv(ctx.graph, ctx.node));
  HS_ASSIGN_OR_RETURN(const FusedActivation fused, read_fused_activation(ctx.node.attrs));
  if (post.empty()) post = ActivationPass(fused);
  else if (fused.kind != FusedActivation::Kind::kNone) return invalid_argument("a depthwise conv with two activations");
  const Tensor& x = ctx.input(0);
  const Shape& out = ctx.graph.value(ctx.node.outputs[0]).type.shape;
  Geometry g;
  g.batch = x.shape()[0];
  g.channels = x.shape()[1];
  g.in_h = x.shape()[2];
  g.in_w = x.shape()[3];
  g.out_h = out[2];
  g.out_w = out[3];
  g.kh = p.window.kernel_h;
  g.kw = p.window.kernel_w;
  g.sh = p.window.stride_h;
  g.sw = p.window.stride_w;
  g.dh = p.window.dilation_h;
  g.dw = p.window.dilation_w;
  g.pad_top = p.window.pad_top;
  g.pad_left = p.window.pad_left;
  g.padded = (g.channels + kRun - 1) / kRun * kRun;
  // ONNX's [C, 1, kh, kw] to [tap][channel], zeros past C.
  const float* filter = ctx.input(1).data<float>();
  const int64_t taps = g.kh * g.kw;
  std::vector<float> w(static_cast<size_t>(taps * g.padded), 0.f);
  for (int64_t c = 0; c < g.channels; ++c)
    for (int64_t t = 0; t < taps; ++t) w[static_cast<size_t>(t * g.padded + c)] = filter[c * taps + t];
  std::vector<float> bias(static_cast<size_t>(g.padded), 0.f);
  if (ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue)
    std::copy_n(ctx.input(2).data<float>(), g.channels, bias.begin());
  return std::unique_ptr<FastOp>(
      new DepthwiseNhwc(x, ctx.tensor_of(output), g, std::move(w), std::move(bias), post, ctx.pool));
}

}  // namespace hetsched::cpu::fast
