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

// ConvShape's cin is the channel count (cout equals it).
struct Geometry : ConvShape {
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
      const float* xt = x + (ky * g.dilation_h * g.in_w + kx * g.dilation_w) * g.cin;
      const float* wt = w + (ky * g.kernel_w + kx) * g.padded;
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
    const int64_t ix = ox * g.stride_w - g.pad_left + kx0 * g.dilation_w;
    const float* x = t.image + ((t.iy0 + t.ky0 * g.dilation_h) * g.in_w + ix) * g.cin + c;
    channels<V>(g, x, w + (t.ky0 * g.kernel_w + kx0) * g.padded + c, bias + c, t.ky1 - t.ky0, kx1 - kx0,
                out + ox * g.cin + c);
  }
}

// The runs of 64, 32 and 16 channels over columns [ox_first, ox_last), run
// by run, then the channels left one at a time.
HETSCHED_FAST_INLINE void runs(const Geometry& g, const RowTaps& t, const float* w, const float* bias,
                               int64_t ox_first, int64_t ox_last, float* out) {
  int64_t c = 0;
  for (; c + 4 * kLanes <= g.cin; c += 4 * kLanes) columns<4>(g, t, w, bias, c, ox_first, ox_last, out);
  if (c + 2 * kLanes <= g.cin) {
    columns<2>(g, t, w, bias, c, ox_first, ox_last, out);
    c += 2 * kLanes;
  }
  if (c + kLanes <= g.cin) {
    columns<1>(g, t, w, bias, c, ox_first, ox_last, out);
    c += kLanes;
  }
  for (; c < g.cin; ++c)
    for (int64_t ox = ox_first; ox < ox_last; ++ox) {
      const int64_t kx0 = t.kx_range[2 * ox], kx1 = t.kx_range[2 * ox + 1];
      const int64_t ix = ox * g.stride_w - g.pad_left + kx0 * g.dilation_w;
      const float* x = t.image + ((t.iy0 + t.ky0 * g.dilation_h) * g.in_w + ix) * g.cin + c;
      const float* wt = w + (t.ky0 * g.kernel_w + kx0) * g.padded + c;
      float acc = bias[c];
      for (int64_t ky = 0; ky < t.ky1 - t.ky0; ++ky)
        for (int64_t kx = 0; kx < kx1 - kx0; ++kx)
          acc += wt[(ky * g.kernel_w + kx) * g.padded] * x[(ky * g.dilation_h * g.in_w + kx * g.dilation_w) * g.cin];
      out[ox * g.cin + c] = acc;
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
  RowTaps t{image, kx_range, 0, 0, oy * g.stride_h - g.pad_top};
  inside(t.iy0, g.kernel_h, g.dilation_h, g.in_h, t.ky0, t.ky1);
  if (g.kernel_h * g.kernel_w * g.padded * static_cast<int64_t>(sizeof(float)) <= kSmallFilterBytes) {
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
      inside(ox * g_.stride_w - g_.pad_left, g_.kernel_w, g_.dilation_w, g_.in_w, kx_range_[2 * ox], kx_range_[2 * ox + 1]);
  }

  Status run() override {
    static const auto body = Clones<row_body>::best();
    const int64_t rows = g_.batch * g_.out_h, row_floats = g_.out_w * g_.cin;
    const double work = 2.0 * static_cast<double>(rows * row_floats * g_.kernel_h * g_.kernel_w);
    const float* x = x_.data<float>();
    float* y = out();
    parallel_tasks(pool_, static_cast<size_t>(rows), work, [&](size_t r) {
      const int64_t image = static_cast<int64_t>(r) / g_.out_h, oy = static_cast<int64_t>(r) % g_.out_h;
      float* row = y + static_cast<int64_t>(r) * row_floats;
      body(&g_, kx_range_.data(), x + image * g_.in_h * g_.in_w * g_.cin, w_.data(), bias_.data(), oy, row);
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

namespace {

// `node`'s parameters when this kernel runs it.
Result<xnnpack::ConvParams> read_depthwise(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, read_fast_conv(graph, node));
  if (!p.depthwise || p.out_channels != p.in_channels) return unsupported("not a depthwise conv of one output per channel");
  return p;
}

}  // namespace

Status depthwise_nhwc_supported(const Graph& graph, const Node& node) { return read_depthwise(graph, node).status(); }

Result<std::unique_ptr<FastOp>> make_depthwise_nhwc(const FastOpContext& ctx, ValueId output, ActivationPass post) {
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, read_depthwise(ctx.graph, ctx.node));
  HS_ASSIGN_OR_RETURN(const FusedActivation fused, read_fused_activation(ctx.node.attrs));
  // Every activation, Relu and Clip too, as a pass over each finished row.
  HS_ASSIGN_OR_RETURN(const SplitActivation activation, split_activation(fused, post, false, "depthwise conv"));
  const Tensor& x = ctx.input(0);
  Geometry g;
  static_cast<ConvShape&>(g) = conv_shape(ctx.graph, ctx.node, p);
  g.padded = (g.cin + kRun - 1) / kRun * kRun;
  // ONNX's [C, 1, kh, kw] to [tap][channel], zeros past C.
  const float* filter = ctx.input(1).data<float>();
  const int64_t taps = g.kernel_h * g.kernel_w;
  std::vector<float> w(static_cast<size_t>(taps * g.padded), 0.f);
  for (int64_t c = 0; c < g.cin; ++c)
    for (int64_t t = 0; t < taps; ++t) w[static_cast<size_t>(t * g.padded + c)] = filter[c * taps + t];
  std::vector<float> bias(static_cast<size_t>(g.padded), 0.f);
  if (ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue)
    std::copy_n(ctx.input(2).data<float>(), g.cin, bias.begin());
  return std::unique_ptr<FastOp>(
      new DepthwiseNhwc(x, ctx.tensor_of(output), g, std::move(w), std::move(bias), activation.pass, ctx.pool));
}

}  // namespace hetsched::cpu::fast
