// Dense 3x3 stride-1 convs (group 1) by Winograd F(4x4, 3x3) or F(2x2,
// 3x3): each TxT block of output pixels comes from a (T+2)x(T+2) block of
// input pixels through (T+2)^2 products per (input, output) channel pair
// instead of 9 T^2, so the GEMM does 1/4 (T = 4) or 4/9 (T = 2) of the
// direct conv's multiply-adds, from 4x or 16/9 the weights. This XNNPACK
// snapshot runs these convs as a direct GEMM (its 7x16 AVX-512 kernel,
// ~180 GFLOP/s on the development machine's EPYC), and ONNX Runtime's MLAS
// has no f32 Winograd on x86 either: ResNet-50's 3x3 convs are 45% of its
// flops. Which T: winograd_rule.h (F(2x2) where F(4x4)'s weights, read
// from memory for few tiles, would cost more than its products save).
//
// The transforms are Lavin and Gray's (arXiv:1509.09308), points 0, +-1,
// +-2 and infinity for T = 4, 0, +-1 and infinity for T = 2:
//   input   V = B^T d B   (d: an input tile)
//   filter  U = G g G^T   (g: the 3x3 filter; at load, in double)
//   output  Y = A^T M A   (M: the element-wise sum over input channels
//                          of U * V, i.e. (T+2)^2 GEMMs [tiles x Cin] . [Cin x Cout])
// Their f32 error is ~3e-6 of the output's range per conv
// (test/winograd_conv_test.cc) and 2.5e-5 of it on ResNet-50's output
// against ONNX Runtime (docs/models.md, "Winograd"), inside the 1e-4
// tolerance.
//
// A run goes over blocks of tiles (all of them when the transformed input
// and output of the block fit kScratchBudget), each in three parallel
// phases: the input transform (by tile), the (T+2)^2 GEMMs on gemm.h's
// micro-kernels (by transform point and 32-column block; the weights are
// transformed and packed into panels once, at init) and the output
// transform with the bias and fused activation (by tile). Channels are
// the vector lanes of both transforms, so NHWC (between XNNPACK segments)
// reads and writes whole vectors; in the graph's order (NCHW) the same
// code gathers with a stride. Every buffer is allocated at init.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/vector_math.h"
#include "delegates/cpu/fast/winograd_rule.h"
#include "delegates/cpu/xnnpack/op_params.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

namespace {

// F(T x T, 3x3) for an output tile of T x T pixels, T = 2 or 4: an input
// tile of kAlpha x kAlpha pixels, kPoints transform points.
template <int T>
struct F {
  static constexpr int64_t kTile = T;
  static constexpr int64_t kAlpha = T + 2;
  static constexpr int64_t kPoints = kAlpha * kAlpha;
};
// The transformed input and output of one block of tiles (the GEMMs' A
// and C): about the L2 of the development machine's cores (1 MiB) plus a
// share of L3; 2 MiB keeps 64-channel layers of 56x56 in 3 blocks and the
// 256-channel layers of 14x14 in one.
constexpr size_t kScratchBudget = size_t{2} << 20;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

struct Geometry {
  int64_t batch = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0, cin = 0, cout = 0;
  int64_t pad_top = 0, pad_left = 0;
  int64_t tiles_h = 0, tiles_w = 0, tiles = 0;  // tiles = batch * tiles_h * tiles_w
  // Element strides of a pixel and a channel: NHWC (C, 1) or NCHW (1, H*W).
  int64_t in_pixel = 0, in_channel = 0, out_pixel = 0, out_channel = 0;
  int64_t out_image = 0;  // elements from one image's output to the next
  int64_t ldv = 0, ldm = 0;  // row strides of V and M: cin and cout rounded up to whole lanes
  int64_t block = 0;         // tiles per block
};

// The 1-D transforms, on 16 channels at a time. F(2x2, 3x3) (points 0,
// +-1, infinity):
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1]
HETSCHED_FAST_INLINE void bt4(const Lanes* d, int64_t s, Lanes* r, int64_t rs) {
  const Lanes d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s];
  r[0] = d0 - d2;
  r[rs] = d1 + d2;
  r[2 * rs] = d2 - d1;
  r[3 * rs] = d1 - d3;
}

HETSCHED_FAST_INLINE void at4(const Lanes* m, int64_t s, Lanes* o, int64_t os) {
  const Lanes m1 = m[s], m2 = m[2 * s];
  o[0] = m[0] + m1 + m2;
  o[os] = m1 - m2 - m[3 * s];
}

// F(4x4, 3x3).
HETSCHED_FAST_INLINE void bt6(const Lanes* d, int64_t s, Lanes* r, int64_t rs) {
  const Lanes d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
  const Lanes t1 = d4 - 4.f * d2, t2 = d3 - 4.f * d1, t3 = d4 - d2, t4 = 2.f * (d3 - d1);
  r[0] = 4.f * d0 - 5.f * d2 + d4;
  r[rs] = t1 + t2;
  r[2 * rs] = t1 - t2;
  r[3 * rs] = t3 + t4;
  r[4 * rs] = t3 - t4;
  r[5 * rs] = 4.f * d1 - 5.f * d3 + d5;
}

HETSCHED_FAST_INLINE void at6(const Lanes* m, int64_t s, Lanes* o, int64_t os) {
  const Lanes m0 = m[0], m1 = m[s], m2 = m[2 * s], m3 = m[3 * s], m4 = m[4 * s], m5 = m[5 * s];
  const Lanes a = m1 + m2, b = m1 - m2, c = m3 + m4, e = m3 - m4;
  o[0] = m0 + a + c;
  o[os] = b + 2.f * e;
  o[2 * os] = a + 4.f * c;
  o[3 * os] = b + 8.f * e + m5;
}

template <int T>
HETSCHED_FAST_INLINE void bt(const Lanes* d, int64_t s, Lanes* r, int64_t rs) {
  if constexpr (T == 2) {
    bt4(d, s, r, rs);
  } else {
    bt6(d, s, r, rs);
  }
}

template <int T>
HETSCHED_FAST_INLINE void at(const Lanes* m, int64_t s, Lanes* o, int64_t os) {
  if constexpr (T == 2) {
    at4(m, s, o, os);
  } else {
    at6(m, s, o, os);
  }
}

// The kAlpha x kAlpha input tile at (y0, x0), channels [c0, c0 + width), with zeros
// outside the image and past `width` (at the image's border, or NCHW, or
// the last channels).
template <int T>
HETSCHED_FAST_INLINE void gather_tile(const float* x, const Geometry& g, int64_t y0, int64_t x0, int64_t c0,
                                      int64_t width, bool whole, Lanes* d) {
  using W = F<T>;
  for (int64_t i = 0; i < W::kAlpha; ++i)
    for (int64_t j = 0; j < W::kAlpha; ++j) {
      const int64_t y = y0 + i, xx = x0 + j;
      Lanes lane = {};
      if (y >= 0 && y < g.in_h && xx >= 0 && xx < g.in_w) {
        const float* src = x + (y * g.in_w + xx) * g.in_pixel + c0 * g.in_channel;
        if (whole) {
          lane = load_lanes(src);
        } else {
          for (int64_t k = 0; k < width; ++k) lane[k] = src[k * g.in_channel];
        }
      }
      d[i * W::kAlpha + j] = lane;
    }
}

// V[p][tile][c0..c0+16) for the kPoints points p of one tile whose top-left
// input pixel is (y0, x0) (pads outside the image read as 0). `x` is the
// tile's image; `v` points at V[0][tile][c0], `point` apart per point.
template <int T>
HETSCHED_FAST_INLINE void input_tile(const float* x, const Geometry& g, int64_t y0, int64_t x0, int64_t c0, float* v,
                                     int64_t point) {
  using W = F<T>;
  Lanes d[W::kPoints];
  const int64_t width = std::min<int64_t>(kLanes, g.cin - c0);
  const bool whole = width == kLanes && g.in_channel == 1;
  if (whole && y0 >= 0 && x0 >= 0 && y0 + W::kAlpha <= g.in_h && x0 + W::kAlpha <= g.in_w) {
    // Inside the image, NHWC, 16 channels: plain vector loads.
    const float* src = x + (y0 * g.in_w + x0) * g.in_pixel + c0;
    for (int64_t i = 0; i < W::kAlpha; ++i)
      for (int64_t j = 0; j < W::kAlpha; ++j) d[i * W::kAlpha + j] = load_lanes(src + (i * g.in_w + j) * g.in_pixel);
  } else {
    gather_tile<T>(x, g, y0, x0, c0, width, whole, d);
  }
  Lanes t[W::kPoints];
  for (int64_t j = 0; j < W::kAlpha; ++j) bt<T>(d + j, W::kAlpha, t + j, W::kAlpha);  // B^T d, column by column
  Lanes r[W::kAlpha];
  for (int64_t i = 0; i < W::kAlpha; ++i) {
    bt<T>(t + i * W::kAlpha, 1, r, 1);  // (B^T d) B, row by row
    for (int64_t j = 0; j < W::kAlpha; ++j) __builtin_memcpy(v + (i * W::kAlpha + j) * point, &r[j], sizeof(Lanes));
  }
}

// The output tile at (oy0, ox0), channels [c0, c0 + 16), from M[p][tile][c0]
// (`m`, `point` apart per point): A^T M A + bias, clamped to [lo, hi] (the
// fused Relu or Clip; other activations are applied by the caller).
template <int T>
HETSCHED_FAST_INLINE void output_tile(const float* m, int64_t point, const Geometry& g, const float* bias, float lo,
                                      float hi, int64_t oy0, int64_t ox0, int64_t c0, float* y) {
  using W = F<T>;
  Lanes s[W::kPoints];
  for (int64_t p = 0; p < W::kPoints; ++p) s[p] = load_lanes(m + p * point);
  Lanes t[W::kTile * W::kAlpha];
  for (int64_t j = 0; j < W::kAlpha; ++j) at<T>(s + j, W::kAlpha, t + j, W::kAlpha);  // A^T M
  const Lanes b = load_lanes(bias + c0);
  const Lanes lov = Lanes{} + lo, hiv = Lanes{} + hi;
  const int64_t width = std::min<int64_t>(kLanes, g.cout - c0);
  const bool whole = width == kLanes && g.out_channel == 1;
  const bool inside = whole && oy0 + W::kTile <= g.out_h && ox0 + W::kTile <= g.out_w;
  for (int64_t i = 0; i < W::kTile; ++i) {
    Lanes o[W::kTile];
    at<T>(t + i * W::kAlpha, 1, o, 1);  // (A^T M) A
    const int64_t oy = oy0 + i;
    if (inside) {
      float* dst = y + (oy * g.out_w + ox0) * g.out_pixel + c0;
      for (int64_t j = 0; j < W::kTile; ++j) {
        Lanes r = o[j] + b;
        r = r < lov ? lov : r;
        r = r > hiv ? hiv : r;
        __builtin_memcpy(dst + j * g.out_pixel, &r, sizeof(r));
      }
      continue;
    }
    if (oy >= g.out_h) break;
    for (int64_t j = 0; j < W::kTile && ox0 + j < g.out_w; ++j) {
      Lanes r = o[j] + b;
      r = r < lov ? lov : r;
      r = r > hiv ? hiv : r;
      float* dst = y + (oy * g.out_w + ox0 + j) * g.out_pixel + c0 * g.out_channel;
      if (whole) {
        __builtin_memcpy(dst, &r, sizeof(r));
      } else {
        for (int64_t k = 0; k < width; ++k) dst[k * g.out_channel] = r[k];
      }
    }
  }
}

// Tiles [first, last) of the block starting at tile `base`, all channels.
template <int T>
HETSCHED_FAST_INLINE void input_tiles(const float* x, const Geometry* g, int64_t base, int64_t first, int64_t last,
                                      float* v) {
  using W = F<T>;
  const int64_t per_image = g->tiles_h * g->tiles_w;
  const int64_t point = g->block * g->ldv;
  for (int64_t t = first; t < last; ++t) {
    const int64_t tile = base + t, n = tile / per_image, r = tile % per_image;
    const float* image = x + n * g->in_h * g->in_w * g->cin;
    const int64_t y0 = r / g->tiles_w * W::kTile - g->pad_top, x0 = r % g->tiles_w * W::kTile - g->pad_left;
    for (int64_t c0 = 0; c0 < g->cin; c0 += kLanes) input_tile<T>(image, *g, y0, x0, c0, v + t * g->ldv + c0, point);
  }
}

template <int T>
HETSCHED_FAST_INLINE void output_tiles(const float* m, const Geometry* g, const float* bias, float lo, float hi,
                                       int64_t base, int64_t first, int64_t last, float* y) {
  using W = F<T>;
  const int64_t per_image = g->tiles_h * g->tiles_w;
  const int64_t point = g->block * g->ldm;
  for (int64_t t = first; t < last; ++t) {
    const int64_t tile = base + t, n = tile / per_image, r = tile % per_image;
    float* image = y + n * g->out_image;
    const int64_t oy0 = r / g->tiles_w * W::kTile, ox0 = r % g->tiles_w * W::kTile;
    for (int64_t c0 = 0; c0 < g->cout; c0 += kLanes)
      output_tile<T>(m + t * g->ldm + c0, point, *g, bias, lo, hi, oy0, ox0, c0, image);
  }
}

// U = G g G^T for every (input, output) channel pair, in double, packed per
// point into gemm.h's panels: point p's panels hold the Cin x Cout matrix
// U[p], `panels` of them (an even number: gemm_block reads two at a time).
template <int T>
AlignedBuffer transform_filter(const float* w, int64_t cin, int64_t cout, int64_t panels) {
  using W = F<T>;
  static const double kG4[6][3] = {{1.0 / 4, 0, 0},
                                   {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                   {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                   {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                   {0, 0, 1}};
  static const double kG2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const auto& kG = [&]() -> const double(&)[W::kAlpha][3] {
    if constexpr (T == 2) {
      return kG2;
    } else {
      return kG4;
    }
  }();
  std::vector<float> u(static_cast<size_t>(W::kPoints * cin * cout));  // [p][ci][co]
  for (int64_t co = 0; co < cout; ++co)
    for (int64_t ci = 0; ci < cin; ++ci) {
      const float* g = w + (co * cin + ci) * 9;
      double gg[W::kAlpha][3];  // G g
      for (int64_t i = 0; i < W::kAlpha; ++i)
        for (int64_t j = 0; j < 3; ++j) gg[i][j] = kG[i][0] * g[j] + kG[i][1] * g[3 + j] + kG[i][2] * g[6 + j];
      for (int64_t i = 0; i < W::kAlpha; ++i)
        for (int64_t j = 0; j < W::kAlpha; ++j) {
          const double v = gg[i][0] * kG[j][0] + gg[i][1] * kG[j][1] + gg[i][2] * kG[j][2];
          u[static_cast<size_t>(((i * W::kAlpha + j) * cin + ci) * cout + co)] = static_cast<float>(v);
        }
    }
  const int64_t per_point = panels * cin * kPanel;
  AlignedBuffer packed(static_cast<size_t>(W::kPoints * per_point) * sizeof(float));  // zeroed: padding panels stay 0
  float* dst = reinterpret_cast<float*>(packed.data());
  for (int64_t p = 0; p < W::kPoints; ++p)
    for (int64_t j = 0; j < cout; j += kPanel)
      pack_panel(cin, cout, u.data() + p * cin * cout, cout, false, j, dst + p * per_point + j * cin);
  return packed;
}

template <int T>
class WinogradConv final : public FastOp {
  using W = F<T>;

 public:
  // `lo`, `hi`: the fused Relu or Clip; `post`: any other activation.
  WinogradConv(const Tensor& x, Tensor& y, const Geometry& g, AlignedBuffer filter, std::vector<float> bias, float lo,
               float hi, ActivationPass post, TaskPool* pool)
      : FastOp(y), x_(x), g_(g), filter_(std::move(filter)), bias_(std::move(bias)), lo_(lo), hi_(hi), post_(post),
        pool_(pool) {
    // kPoints GEMMs a block of tiles, each split in column blocks: 64 columns
    // where that gives every thread four tasks, 32 where it would not
    // (64 output channels at 16 threads: 36 tasks, 72 in blocks of 32).
    width_ = block_columns(g_.cout, W::kPoints, pool ? pool->threads() : 1);
    column_blocks_ = (g_.cout + width_ - 1) / width_;
    v_ = AlignedBuffer(static_cast<size_t>(W::kPoints * g_.block * g_.ldv) * sizeof(float));
    m_ = AlignedBuffer(static_cast<size_t>(W::kPoints * g_.block * g_.ldm) * sizeof(float));
  }

  // A residual of the output's shape added after the activation
  // (ConvGroup::add_last), pixel run by pixel run as the activation goes.
  void add_residual_last(const Tensor* residual) { residual_ = residual; }

  // NHWC: pixels `pixel_stride` floats apart (the output transform and the
  // activation after it write each pixel's channels as one run).
  bool write_channels_into(float* dst, int64_t pixel_stride) override {
    if (g_.out_channel != 1 || pixel_stride < g_.cout || residual_) return false;
    g_.out_pixel = pixel_stride;
    g_.out_image = g_.out_h * g_.out_w * pixel_stride;
    write_to(dst);
    return true;
  }

  Status run() override {
    static const auto in_fn = Clones<input_tiles<T>>::best();
    static const auto out_fn = Clones<output_tiles<T>>::best();
    const float* x = x_.data<float>();
    float* y = out();
    float* v = reinterpret_cast<float*>(v_.data());
    float* m = reinterpret_cast<float*>(m_.data());
    const float* u = reinterpret_cast<const float*>(filter_.data());
    // The packed filter's panels a point (make_winograd packs them in blocks of kBlockColumns).
    const int64_t panels = (g_.cout + kBlockColumns - 1) / kBlockColumns * kBlockPanels;
    for (int64_t base = 0; base < g_.tiles; base += g_.block) {
      const int64_t count = std::min(g_.block, g_.tiles - base);
      const int64_t chunks = std::min<int64_t>(count, 4 * (pool_ ? pool_->threads() : 1));
      // The three phases split over the pool together or not at all, by
      // their work in all: the transforms alone are often under the
      // threshold where the GEMMs are over it, and split GEMMs between
      // serial transforms read half of V and write half of M on the other
      // core (32x32 channels at 13x13, 2 threads: 0.021 ms against 0.016
      // on one).
      const double in_work = static_cast<double>(count * g_.cin) * W::kPoints * 8;
      const double gemm_work = 2.0 * static_cast<double>(count * g_.cin * g_.cout) * W::kPoints;
      const double out_work = static_cast<double>(count * g_.cout) * W::kPoints * 6;
      const double work = in_work + gemm_work + out_work;
      parallel_tasks(pool_, static_cast<size_t>(chunks), work, [&](size_t c) {
        in_fn(x, &g_, base, static_cast<int64_t>(c) * count / chunks, static_cast<int64_t>(c + 1) * count / chunks, v);
      });
      parallel_tasks(pool_, static_cast<size_t>(W::kPoints * column_blocks_), work, [&](size_t task) {
        const int64_t p = static_cast<int64_t>(task) / column_blocks_, jb = static_cast<int64_t>(task) % column_blocks_;
        const int64_t j0 = jb * width_;
        gemm_block(count, g_.cin, std::min(width_, g_.cout - j0), v + p * g_.block * g_.ldv, g_.ldv,
                   u + (p * panels + j0 / kPanel) * g_.cin * kPanel, Epilogue{}, m + p * g_.block * g_.ldm + j0, g_.ldm);
      });
      parallel_tasks(pool_, static_cast<size_t>(chunks), work, [&](size_t c) {
        const int64_t first = static_cast<int64_t>(c) * count / chunks, last = static_cast<int64_t>(c + 1) * count / chunks;
        out_fn(m, &g_, bias_.data(), lo_, hi_, base, first, last, y);
        if (!post_.empty() || residual_) finish_tiles(base + first, base + last, y);
      });
    }
    return Status::ok();
  }

 private:
  // The activation that is not a clamp (a SiLU after the conv, HardSwish,
  // Sigmoid...), then the residual that follows it, over the pixels of
  // tiles [first, last), still in cache: in NHWC each pixel's channels are
  // one run, in NCHW each channel's tile row. The residual has the output's
  // own layout (no wider pixel stride: write_channels_into refuses).
  void finish_tiles(int64_t first, int64_t last, float* y) const {
    static const auto add = Clones<add_floats>::best();
    const float* residual = residual_ ? residual_->data<float>() : nullptr;
    const int64_t per_image = g_.tiles_h * g_.tiles_w;
    const auto finish = [&](int64_t at, int64_t n) {
      if (!post_.empty()) post_.run(y + at, n);
      if (residual) add(residual + at, y + at, n);
    };
    // Runs of tiles side by side in one row of tiles: in NHWC with pixels
    // back to back, each output row of such a run is one run of floats (a
    // call per pixel cost a 24-channel conv at 112x112 a third of its time).
    const bool rows_whole = g_.out_channel == 1 && g_.out_pixel == g_.cout;
    for (int64_t tile = first; tile < last;) {
      const int64_t n = tile / per_image, r = tile % per_image;
      const int64_t span = rows_whole ? std::min(last - tile, g_.tiles_w - r % g_.tiles_w) : 1;
      const int64_t image = n * g_.out_image;
      const int64_t oy0 = r / g_.tiles_w * W::kTile, ox0 = r % g_.tiles_w * W::kTile;
      const int64_t oy1 = std::min(oy0 + W::kTile, g_.out_h), ox1 = std::min(ox0 + span * W::kTile, g_.out_w);
      for (int64_t oy = oy0; oy < oy1; ++oy) {
        if (rows_whole) {
          finish(image + (oy * g_.out_w + ox0) * g_.cout, (ox1 - ox0) * g_.cout);
        } else if (g_.out_channel == 1) {
          for (int64_t ox = ox0; ox < ox1; ++ox) finish(image + (oy * g_.out_w + ox) * g_.out_pixel, g_.cout);
        } else {
          for (int64_t c = 0; c < g_.cout; ++c) finish(image + c * g_.out_channel + oy * g_.out_w + ox0, ox1 - ox0);
        }
      }
      tile += span;
    }
  }

  const Tensor& x_;
  Geometry g_;
  AlignedBuffer filter_;     // U, packed per point (transform_filter)
  std::vector<float> bias_;  // [ldm], zero past cout
  float lo_, hi_;  // the fused Relu or Clip, in the output transform
  ActivationPass post_;
  const Tensor* residual_ = nullptr;  // added after the activation (add_residual_last), or none
  TaskPool* pool_;
  int64_t width_ = kBlockColumns, column_blocks_ = 0;  // the GEMMs' column blocks
  AlignedBuffer v_;  // [W::kPoints][block][ldv]: the transformed input of one block of tiles
  AlignedBuffer m_;  // [W::kPoints][block][ldm]: the GEMMs' products
};

Status shape_supported(const Graph& graph, const Node& node) {
  if (node.op != "Conv") return unsupported("not a Conv");
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return unsupported("not X, W and one output");
  const Value& x = graph.value(node.inputs[0]);
  const Value& w = graph.value(node.inputs[1]);
  if (x.is_constant()) return unsupported("the input is a constant");
  if (!x.type_known || !x.type.is_static() || x.type.dtype != DType::kFloat32 || x.type.rank() != 4)
    return unsupported("X is not a static rank-4 f32 tensor");
  if (!w.is_constant() || w.constant->dtype() != DType::kFloat32) return unsupported("W is not an f32 constant");
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && !graph.value(node.inputs[2]).is_constant())
    return unsupported("the bias is computed at run time");
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, xnnpack::read_conv(graph, node));
  const xnnpack::Window2d& win = p.window;
  if (p.groups != 1) return unsupported("a grouped conv");
  if (win.kernel_h != 3 || win.kernel_w != 3) return unsupported("not a 3x3 kernel");
  if (win.stride_h != 1 || win.stride_w != 1 || win.dilation_h != 1 || win.dilation_w != 1)
    return unsupported("a stride or dilation other than 1");
  return read_fused_activation(node.attrs).status();
}

WinogradShape shape_of(const Graph& graph, const Node& node, int threads) {
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  return {x[1], y[1], y[2], y[3], y[0], threads};
}

Status supports(const Graph& graph, const Node& node, int threads) {
  HS_RETURN_IF_ERROR(shape_supported(graph, node));
  const WinogradChoice choice = winograd_choice();
  if (choice == WinogradChoice::kOff) return unsupported("HETSCHED_WINOGRAD=off");
  if (choice == WinogradChoice::kRule && !winograd_pays(shape_of(graph, node, threads)))
    return unsupported("a direct conv is faster at this shape and thread count (winograd_rule.h)");
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  return make_winograd(ctx, ctx.node.outputs[0], ActivationPass());
}

}  // namespace

namespace {

template <int T>
std::unique_ptr<FastOp> make_tiled(const FastOpContext& ctx, ValueId output, const xnnpack::ConvParams& p,
                                   const SplitActivation& activation, const Tensor* residual) {
  using W = F<T>;
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.tensor_of(output);
  const Shape& out = ctx.graph.value(ctx.node.outputs[0]).type.shape;
  Geometry g;
  g.batch = x.shape()[0];
  g.cin = x.shape()[1];
  g.in_h = x.shape()[2];
  g.in_w = x.shape()[3];
  g.cout = out[1];
  g.out_h = out[2];
  g.out_w = out[3];
  g.pad_top = p.window.pad_top;
  g.pad_left = p.window.pad_left;
  g.tiles_h = (g.out_h + W::kTile - 1) / W::kTile;
  g.tiles_w = (g.out_w + W::kTile - 1) / W::kTile;
  g.tiles = g.batch * g.tiles_h * g.tiles_w;
  g.in_pixel = ctx.nhwc ? g.cin : 1;
  g.in_channel = ctx.nhwc ? 1 : g.in_h * g.in_w;
  g.out_pixel = ctx.nhwc ? g.cout : 1;
  g.out_channel = ctx.nhwc ? 1 : g.out_h * g.out_w;
  g.out_image = g.out_h * g.out_w * g.cout;
  g.ldv = round_up(g.cin, kLanes);
  g.ldm = round_up(g.cout, kLanes);
  // Blocks of whole 12-row micro-kernel tiles, as even as the budget allows.
  const int64_t per_tile = W::kPoints * (g.ldv + g.ldm) * static_cast<int64_t>(sizeof(float));
  const int64_t fit = std::max<int64_t>(12, static_cast<int64_t>(kScratchBudget) / per_tile / 12 * 12);
  // Each block reads all of U (kPoints * Cin * Cout floats); where that is
  // more than the whole scratch, one block of all tiles moves fewer bytes.
  const int64_t filter_bytes = W::kPoints * g.cin * g.cout * static_cast<int64_t>(sizeof(float));
  const int64_t blocks = filter_bytes > g.tiles * per_tile ? 1 : (g.tiles + fit - 1) / fit;
  g.block = std::min(g.tiles, round_up((g.tiles + blocks - 1) / blocks, 12));
  const Tensor& w = ctx.input(1);
  const int64_t panels = (g.cout + kBlockColumns - 1) / kBlockColumns * kBlockPanels;
  AlignedBuffer filter = transform_filter<T>(w.data<float>(), g.cin, g.cout, panels);
  std::vector<float> bias(static_cast<size_t>(g.ldm + kLanes), 0.f);
  if (ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue) {
    const Tensor& b = ctx.input(2);
    std::copy(b.data<float>(), b.data<float>() + g.cout, bias.begin());
  }
  auto op = std::make_unique<WinogradConv<T>>(x, y, g, std::move(filter), std::move(bias), activation.lo, activation.hi,
                                              activation.pass, ctx.pool);
  op->add_residual_last(residual);
  return op;
}

}  // namespace

Result<std::unique_ptr<FastOp>> make_winograd(const FastOpContext& ctx, ValueId output, const ActivationPass& post,
                                              const Tensor* residual) {
  HS_RETURN_IF_ERROR(supports(ctx.graph, ctx.node, ctx.threads()));
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, xnnpack::read_conv(ctx.graph, ctx.node));
  HS_ASSIGN_OR_RETURN(const FusedActivation fused, read_fused_activation(ctx.node.attrs));
  // Relu and Clip clamp in the output transform; the others run after it.
  HS_ASSIGN_OR_RETURN(const SplitActivation activation, split_activation(fused, post, true, "Winograd conv"));
  if (winograd_tile(shape_of(ctx.graph, ctx.node, ctx.threads())) == 2)
    return make_tiled<2>(ctx, output, p, activation, residual);
  return make_tiled<4>(ctx, output, p, activation, residual);
}

bool winograd_conv_leaves_xnnpack(const Graph& graph, const Node& node, int threads) {
  return node.op == "Conv" && supports(graph, node, threads).is_ok();
}

FastOpKind winograd_conv_kind() { return {"Conv", false, supports, create}; }

}  // namespace hetsched::cpu::fast
