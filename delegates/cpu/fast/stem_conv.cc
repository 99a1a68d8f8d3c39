#include "delegates/cpu/fast/stem_conv.h"

#include <algorithm>
#include <vector>

#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/vector_math.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

namespace {

constexpr int64_t kMaxInChannels = 4;
constexpr int64_t kMaxDepth = 64;
constexpr int64_t kMinOutChannels = 8;
constexpr int64_t kMaxOutChannels = 64;
// Past 64 outputs, patchify stems only (kernel = stride: ConvNeXt's and
// Swin's 4x4 stride-4, 96 outputs, 0.46 ms on XNNPACK, 0.25 here); a 3x3
// stem was no faster than XNNPACK's at 64 (SqueezeNet's, above).
constexpr int64_t kMaxPatchifyOutChannels = 128;

struct Geometry : ConvShape {
  // The input of one image copied planar (Cin x image_h x image_w) with
  // its padding, so that every window is inside: rows and columns the
  // output's windows reach.
  int64_t image_h = 0, image_w = 0;
  int64_t runs = 0;  // vectors of 16 output channels; the last may overlap the one before
  float lo = 0.f, hi = 0.f;
  // By tap and input channel, in the weights' order: the input's offset
  // from a window's first element (one loop of depth steps: three nested
  // loops of 3 ran SqueezeNet's 64-channel stem at a third of the FMAs'
  // rate, their exits mispredicted).
  int64_t depth = 0;
  int64_t offsets[kMaxDepth] = {};
};

// Output channel offset of vector v: 16 v, the last one moved back to end
// at Cout (24 channels: 0-15, 8-23; the overlap's sums come out the same
// both times). Cout < 16: 0, the vector's lanes past Cout computed on
// weights padded with zeros and not stored.
HETSCHED_FAST_INLINE int64_t run_offset(const Geometry& g, int v) {
  return g.cout < kLanes ? 0 : std::min<int64_t>(v * kLanes, g.cout - kLanes);
}

// P output columns from `ox` of row `oy`, V vectors of 16 output channels
// from vector v0:
// per tap and input channel, V weight vectors and P broadcast inputs, P x V
// FMAs; the sums stay in registers for the whole window (P V of them,
// 12 for the shapes below). `w` is [tap][Cin][cout_stride] with the taps in
// (ky, kx) order; `image` this image's padded planes.
template <int P, int V, int S>
HETSCHED_FAST_INLINE void tile(const Geometry& g, const float* image, const float* w, int64_t cout_stride,
                               const float* bias, int64_t oy, int64_t ox, float* out_row, float* spill, int v0) {
  const int64_t stride_w = S > 0 ? S : g.stride_w;
  Lanes acc[P][V];
  int64_t offset[V];  // worked out once: in the loop below it cost a branch per load
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) offset[v] = run_offset(g, v0 + v);
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    const Lanes b = load_lanes(bias + offset[v]);
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  const float* x0 = image + oy * g.stride_h * g.image_w + ox * stride_w;
  for (int64_t t = 0; t < g.depth; ++t, w += cout_stride) {
    const float* x = x0 + g.offsets[t];
    Lanes wv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) wv[v] = load_lanes(w + offset[v]);
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) {
      const float xs = x[p * stride_w];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[p][v] += wv[v] * xs;
    }
  }
  const Lanes lo = g.lo - Lanes{}, hi = g.hi - Lanes{};
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      Lanes r = acc[p][v] < lo ? lo : acc[p][v];
      r = r > hi ? hi : r;
      if (g.cout < kLanes) {  // one vector, part of it stored
        __builtin_memcpy(spill, &r, sizeof(Lanes));
        std::copy_n(spill, g.cout, out_row + (ox + p) * g.cout);
      } else {
        __builtin_memcpy(out_row + (ox + p) * g.cout + offset[v], &r, sizeof(Lanes));
      }
    }
}

// Output row `oy` of one image: tiles of P columns, the last moved back to
// end at the row's end (overlapping the one before; a row narrower than P
// goes column by column).
template <int P, int V, int S>
HETSCHED_FAST_INLINE void row(const Geometry* gp, const float* image, const float* w, int64_t cout_stride,
                              const float* bias, int64_t oy, float* out_row, int v0) {
  const Geometry& g = *gp;
  alignas(64) float spill[kLanes];
  if (g.out_w < P) {
    for (int64_t ox = 0; ox < g.out_w; ++ox) tile<1, V, S>(g, image, w, cout_stride, bias, oy, ox, out_row, spill, v0);
    return;
  }
  for (int64_t ox = 0; ox < g.out_w; ox += P)
    tile<P, V, S>(g, image, w, cout_stride, bias, oy, std::min(ox, g.out_w - P), out_row, spill, v0);
}

// By the stride along the row: 1, 2 (most stems) and 4 (a patchify conv)
// as constants, any other as it is.
template <int P, int V>
HETSCHED_FAST_INLINE void strided_row(const Geometry* g, const float* image, const float* w, int64_t cout_stride,
                                      const float* bias, int64_t oy, float* out_row, int v0) {
  switch (g->stride_w) {
    case 1: return row<P, V, 1>(g, image, w, cout_stride, bias, oy, out_row, v0);
    case 2: return row<P, V, 2>(g, image, w, cout_stride, bias, oy, out_row, v0);
    case 4: return row<P, V, 4>(g, image, w, cout_stride, bias, oy, out_row, v0);
    default: return row<P, V, 0>(g, image, w, cout_stride, bias, oy, out_row, v0);
  }
}

// By the number of vectors, columns per tile as measured at 1 thread on
// the 2-core Xeon: 64 outputs (SqueezeNet's stem, 111x111) 0.61 ms in
// tiles of 3 columns, 0.32 in tiles of 6 (24 sums in registers); 32
// (MobileNetV2's) 0.19 ms in tiles of 6, 0.17-0.18 in tiles of 12; 16
// (MobileNetV3-Small's, with its HardSwish) 0.13 ms in tiles of 12 or 16,
// 0.18-0.20 in tiles of 24. XNNPACK took 0.31, 0.31 and 0.23 ms.
// Past 4 vectors (ConvNeXt's and Swin's 4x4 stride-4 patchify stems, 96
// outputs), the row goes once per group of at most 4, the groups as even
// as they come (96: 3 + 3).
HETSCHED_FAST_INLINE void row_body(const Geometry* g, const float* image, const float* w, int64_t cout_stride,
                                   const float* bias, int64_t oy, float* out_row) {
  const int groups = static_cast<int>((g->runs + 3) / 4);
  for (int i = 0, v0 = 0, left = static_cast<int>(g->runs); i < groups; ++i) {
    const int v = (left + groups - i - 1) / (groups - i);
    switch (v) {
      case 1: strided_row<12, 1>(g, image, w, cout_stride, bias, oy, out_row, v0); break;
      case 2: strided_row<12, 2>(g, image, w, cout_stride, bias, oy, out_row, v0); break;
      case 3: strided_row<8, 3>(g, image, w, cout_stride, bias, oy, out_row, v0); break;
      default: strided_row<6, 4>(g, image, w, cout_stride, bias, oy, out_row, v0); break;
    }
    v0 += v;
    left -= v;
  }
}

class StemConv final : public FastOp {
 public:
  StemConv(const Tensor& x, Tensor& y, const Geometry& g, bool nchw_input, std::vector<float> w, int64_t cout_stride,
           std::vector<float> bias, ActivationPass post, TaskPool* pool)
      : FastOp(y),
        x_(x),
        g_(g),
        nchw_input_(nchw_input),
        w_(std::move(w)),
        cout_stride_(cout_stride),
        bias_(std::move(bias)),
        post_(post),
        pool_(pool),
        // Zeroed once: the padding is never written.
        image_(static_cast<size_t>(g.batch * g.cin * g.image_h * g.image_w) * sizeof(float)) {}

  Status run() override {
    static const auto body = Clones<row_body>::best();
    float* image = reinterpret_cast<float*>(image_.data());
    const int64_t rows = g_.batch * g_.out_h, row_floats = g_.out_w * g_.cout;
    const int64_t image_floats = g_.cin * g_.image_h * g_.image_w;
    const double work = 2.0 * static_cast<double>(rows * row_floats * g_.kernel_h * g_.kernel_w * g_.cin);
    copy_input(image, work);
    float* y = out();
    parallel_tasks(pool_, static_cast<size_t>(rows), work, [&](size_t r) {
      const int64_t n = static_cast<int64_t>(r) / g_.out_h, oy = static_cast<int64_t>(r) % g_.out_h;
      float* out_row = y + static_cast<int64_t>(r) * row_floats;
      body(&g_, image + n * image_floats, w_.data(), cout_stride_, bias_.data(), oy, out_row);
      post_.run(out_row, row_floats);
    });
    return Status::ok();
  }

 private:
  // The input's rows, NCHW or NHWC, into the padded planes' interior: a
  // task per input row (all its channels), split as the conv after it is
  // (by the conv's `work`), so that each thread copies about the rows its
  // output rows then read.
  void copy_input(float* image, double work) const {
    const float* x = x_.data<float>();
    const int64_t rows_in = std::min(g_.in_h, g_.image_h - g_.pad_top);
    const int64_t width = std::max<int64_t>(0, std::min(g_.in_w, g_.image_w - g_.pad_left));
    const int64_t plane_in = g_.in_h * g_.in_w, plane = g_.image_h * g_.image_w;
    parallel_tasks(pool_, static_cast<size_t>(g_.batch * rows_in), work, [&](size_t t) {
      const int64_t n = static_cast<int64_t>(t) / rows_in, iy = static_cast<int64_t>(t) % rows_in;
      for (int64_t c = 0; c < g_.cin; ++c) {
        float* dst = image + (n * g_.cin + c) * plane + (iy + g_.pad_top) * g_.image_w + g_.pad_left;
        if (nchw_input_) {
          const float* src = x + (n * g_.cin + c) * plane_in + iy * g_.in_w;
          std::copy(src, src + width, dst);
        } else {
          const float* src = x + ((n * g_.in_h + iy) * g_.in_w) * g_.cin + c;
          for (int64_t ix = 0; ix < width; ++ix) dst[ix] = src[ix * g_.cin];
        }
      }
    });
  }

  const Tensor& x_;
  Geometry g_;
  bool nchw_input_;
  std::vector<float> w_;  // [tap][Cin][cout_stride_], zeros past Cout
  int64_t cout_stride_;
  std::vector<float> bias_;  // [cout_stride_]
  ActivationPass post_;
  TaskPool* pool_;
  AlignedBuffer image_;  // [batch][Cin][image_h][image_w]
};

}  // namespace

bool stem_conv_fits(const ConvShape& s) {
  const bool patchify = s.kernel_h == s.stride_h && s.kernel_w == s.stride_w && s.pad_top == 0 && s.pad_left == 0;
  return s.cin <= kMaxInChannels && s.kernel_h * s.kernel_w * s.cin <= kMaxDepth && s.cout >= kMinOutChannels &&
         s.cout <= (patchify ? kMaxPatchifyOutChannels : kMaxOutChannels) && s.dilation_h == 1 && s.dilation_w == 1;
}

Result<std::unique_ptr<FastOp>> make_stem_conv(const FastOpContext& ctx, const ConvGroup& group) {
  if (!ctx.nhwc) return invalid_argument("the stem conv kernel writes NHWC output only");
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, read_fast_conv(ctx.graph, ctx.node));
  if (p.groups != 1) return invalid_argument("the stem conv kernel runs group-1 convs only");
  HS_ASSIGN_OR_RETURN(const FusedActivation fused, read_fused_activation(ctx.node.attrs));
  const ActivationPass then = group.silu_mul != kNoNode ? ActivationPass::silu() : ActivationPass();
  HS_ASSIGN_OR_RETURN(const SplitActivation activation, split_activation(fused, then, true, "stem conv"));
  Geometry g;
  static_cast<ConvShape&>(g) = conv_shape(ctx.graph, ctx.node, p);
  if (!stem_conv_fits(g)) return invalid_argument("not a shape the stem conv kernel runs (stem_conv_fits)");
  g.image_h = (g.out_h - 1) * g.stride_h + g.kernel_h;
  g.image_w = (g.out_w - 1) * g.stride_w + g.kernel_w;
  g.runs = (g.cout + kLanes - 1) / kLanes;
  g.lo = activation.lo;
  g.hi = activation.hi;
  g.depth = g.kernel_h * g.kernel_w * g.cin;
  for (int64_t ky = 0, t = 0; ky < g.kernel_h; ++ky)
    for (int64_t kx = 0; kx < g.kernel_w; ++kx)
      for (int64_t ci = 0; ci < g.cin; ++ci, ++t) g.offsets[t] = ci * g.image_h * g.image_w + ky * g.image_w + kx;
  // ONNX's [Cout][Cin][kh][kw] to [kh][kw][Cin][Cout], rows padded to a
  // whole vector where Cout < 16.
  const int64_t taps = g.kernel_h * g.kernel_w, stride = std::max<int64_t>(g.cout, kLanes);
  const float* filter = ctx.input(1).data<float>();
  std::vector<float> w(static_cast<size_t>(taps * g.cin * stride), 0.f);
  for (int64_t co = 0; co < g.cout; ++co)
    for (int64_t ci = 0; ci < g.cin; ++ci)
      for (int64_t t = 0; t < taps; ++t) w[static_cast<size_t>((t * g.cin + ci) * stride + co)] = filter[(co * g.cin + ci) * taps + t];
  std::vector<float> bias(static_cast<size_t>(stride), 0.f);
  if (ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue)
    std::copy_n(ctx.input(2).data<float>(), g.cout, bias.begin());
  return std::unique_ptr<FastOp>(new StemConv(ctx.input(0), ctx.tensor_of(group.output), g, ctx.nchw_input, std::move(w),
                                              stride, std::move(bias), activation.pass, ctx.pool));
}

}  // namespace hetsched::cpu::fast
