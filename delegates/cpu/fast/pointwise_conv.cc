// Convs on the fast GEMM: 1x1 ones (pointwise_conv.h's groups) and dense
// KxK ones (dense_conv_rule.h). On NHWC data (an NHWC step between XNNPACK
// segments) the conv is C[pixels x Cout] = A[pixels x K] . W^T, K = taps x
// Cin, A's rows being the output pixels' windows read in place (gemm.h's
// ARows: a segment per kernel row, from the input itself, or from a
// zero-bordered copy of it where a window hangs over the padding; a 1x1
// stride-1 conv's A is the input) or, dilated in width or with
// HETSCHED_CONV_WINDOWS=off, gathered tap by tap into a buffer, the weights
// packed into panels once, at init, and the bias, residual and Relu/Clip in
// the micro-kernel's stores. In the graph's order (NCHW) it is, per image,
// C[Cout x pixels] = W[Cout x K] . X[K x pixels]: the input's windows are
// packed into panels on every run with a row of ones under them, and the
// bias is W's extra column, so the same micro-kernel adds it.
//
// Both split C into tasks as gemm_split.h says.
#include "delegates/cpu/fast/pointwise_conv.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/dense_conv_rule.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/gemm_split.h"
#include "delegates/cpu/fast/pointwise_rule.h"
#include "delegates/cpu/fast/silu.h"
#include "delegates/cpu/fast/stem_conv.h"
#include "delegates/cpu/fast/vector_math.h"
#include "delegates/cpu/xnnpack/op_params.h"
#include "delegates/cpu/xnnpack/segment_plan.h"
#include "graph/conv_reach.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

namespace {

// HETSCHED_CONV_WINDOWS=off gathers every window into A again, for A/B
// runs against reading them in place.
bool windows_enabled() {
  const char* v = std::getenv("HETSCHED_CONV_WINDOWS");
  return !(v && std::string(v) == "off");
}

// Whether an NHWC conv of this shape reads its windows in place: a kernel
// row must be consecutive floats of an NHWC row.
bool reads_windows(const ConvShape& g) { return g.dilation_w == 1 && windows_enabled(); }

struct Geometry : ConvShape {
  int64_t out_pixels() const { return out_h * out_w; }
  int64_t taps() const { return kernel_h * kernel_w; }
  int64_t depth() const { return taps() * cin; }  // the GEMM's K
  // NHWC: whether A is gathered from the input rather than the input itself.
  bool gathers() const { return stride_h != 1 || stride_w != 1 || taps() != 1 || pad_top != 0 || pad_left != 0; }
  // The input row and column tap (ky, kx) of output pixel (oy, ox) reads;
  // outside [0, in_h) x [0, in_w) it reads the padding.
  int64_t in_y(int64_t oy, int64_t ky) const { return oy * stride_h - pad_top + ky * dilation_h; }
  int64_t in_x(int64_t ox, int64_t kx) const { return ox * stride_w - pad_left + kx * dilation_w; }
};

class GemmConv final : public FastOp {
 public:
  // `nchw_input` (with nhwc): x is an island input in the caller's NCHW
  // order, y NHWC.
  GemmConv(const Tensor& x, Tensor& y, const Tensor* residual, const Geometry& g, bool nhwc, bool nchw_input,
           const float* w, const float* bias, float lo, float hi, ActivationPass post, TaskPool* pool)
      : FastOp(y), x_(x), residual_(residual), g_(g), nhwc_(nhwc), nchw_input_(nchw_input), lo_(lo), hi_(hi),
        post_(post), pool_(pool) {
    const int threads = pool ? pool->threads() : 1;
    const int64_t depth = g_.depth(), taps = g_.taps();
    if (nhwc_) {
      split_ = split_gemm(g_.batch * g_.out_pixels(), depth, g_.cout, depth, g_.cout, threads);
      // W^T's rows in A's column order: tap by tap, the channels within
      // (ONNX keeps each channel's taps together).
      std::vector<float> reordered;
      if (taps > 1) {
        reordered.resize(static_cast<size_t>(g_.cout * depth));
        for (int64_t o = 0; o < g_.cout; ++o)
          for (int64_t c = 0; c < g_.cin; ++c)
            for (int64_t t = 0; t < taps; ++t) reordered[(o * taps + t) * g_.cin + c] = w[(o * g_.cin + c) * taps + t];
        w = reordered.data();
      }
      panels_ = AlignedBuffer(static_cast<size_t>(split_.padded_columns() * depth) * sizeof(float));
      float* panels = reinterpret_cast<float*>(panels_.data());
      for (int64_t j = 0; j < g_.cout; j += kPanel) pack_panel(depth, g_.cout, w, depth, true, j, panels + j * depth);
      bias_.assign(static_cast<size_t>(split_.padded_columns()), 0.f);
      if (bias) std::copy(bias, bias + g_.cout, bias_.begin());
      if (!nchw_input_ && plan_taps()) return;
      if (!g_.gathers()) return;
      if (reads_windows(g_)) {
        plan_windows();
        return;
      }
      gathered_ = AlignedBuffer(static_cast<size_t>(split_.m * depth) * sizeof(float));
      return;
    }
    // NCHW: A is W with the bias as an extra column, B the input's windows
    // (a row per channel and tap, a column per output pixel) with a row of
    // ones under them.
    const int64_t k = depth + 1;
    split_ = split_gemm(g_.cout, k, g_.out_pixels(), k, g_.out_pixels(), threads);
    weights_.assign(static_cast<size_t>(g_.cout * k), 0.f);
    for (int64_t o = 0; o < g_.cout; ++o) {
      std::copy(w + o * depth, w + (o + 1) * depth, weights_.begin() + o * k);
      if (bias) weights_[static_cast<size_t>(o * k + depth)] = bias[o];
    }
    panels_ = AlignedBuffer(static_cast<size_t>(split_.padded_columns() * k) * sizeof(float));
    for (int64_t ky = 0; ky < g_.kernel_h; ++ky)
      for (int64_t kx = 0; kx < g_.kernel_w; ++kx)
        for (int64_t oy = 0; oy < g_.out_h; ++oy)
          for (int64_t ox = 0; ox < g_.out_w; ++ox) {
            const int64_t iy = g_.in_y(oy, ky), ix = g_.in_x(ox, kx);
            source_.push_back(iy >= 0 && iy < g_.in_h && ix >= 0 && ix < g_.in_w ? iy * g_.in_w + ix : -1);
          }
  }

  // Scales A's columns (the input's channels) by `scale` ([C] floats, read
  // on every run) by scaling the weights' rows: a squeeze-and-excitation
  // gate folded in, where the Mul would have been a pass over the input.
  // NHWC, unstrided 1x1 only (make_gemm_conv checks).
  void scale_input_by(const Tensor* scale) {
    scale_ = scale;
    scaled_panels_ = AlignedBuffer(panels_.size());
  }

  // The residual goes in after the activation (ConvGroup::add_last): a
  // pass over each task's rows once they have it, still in cache.
  void add_residual_last() { residual_last_ = true; }

  // NHWC on the GEMM (not tap by tap, which adds into C) and without a
  // residual (read at C's stride): C's rows are the output pixels, so a
  // wider row stride puts them into a Concat's output.
  bool write_channels_into(float* dst, int64_t pixel_stride) override {
    if (!nhwc_ || residual_ || !taps_.empty() || pixel_stride < g_.cout) return false;
    split_.ldc = pixel_stride;
    write_to(dst);
    return true;
  }

  Status run() override {
    const float* x = x_.data<float>();
    const float* residual = residual_ ? residual_->data<float>() : nullptr;
    const float* panels = scale_ ? scale_panels() : reinterpret_cast<const float*>(panels_.data());
    if (nhwc_) {
      if (!taps_.empty()) {
        run_taps(x, panels, residual, out());
        return Status::ok();
      }
      if (windows_) {
        const ARows a{padded_.size() ? pad(x) : x, 0, g_.kernel_h, g_.dilation_h * image_w_ * g_.cin,
                      row_offsets_.data()};
        run_gemm(a, panels, bias_.data(), residual, out());
        return Status::ok();
      }
      run_gemm(ARows{g_.gathers() ? gather(x) : x, split_.lda}, panels, bias_.data(), residual, out());
      return Status::ok();
    }
    const int64_t in_size = g_.cin * g_.in_h * g_.in_w, out_size = g_.cout * g_.out_pixels();
    for (int64_t n = 0; n < g_.batch; ++n) {
      pack_input(x + n * in_size);
      run_gemm(ARows{weights_.data(), split_.lda}, panels, nullptr, residual ? residual + n * out_size : nullptr,
               out() + n * out_size);
    }
    return Status::ok();
  }

 private:
  // NHWC, windows read in place: the extent the windows read, in padded
  // coordinates; a zeroed copy of the input with its padding when a window
  // hangs over an edge (the border is zeroed once and never written).
  void plan_windows() {
    windows_ = true;
    image_h_ = (g_.out_h - 1) * g_.stride_h + (g_.kernel_h - 1) * g_.dilation_h + 1;
    image_w_ = (g_.out_w - 1) * g_.stride_w + g_.kernel_w;
    const bool hangs_over = g_.pad_top > 0 || g_.pad_left > 0 || image_h_ - g_.pad_top > g_.in_h ||
                            image_w_ - g_.pad_left > g_.in_w;
    if (!hangs_over && !nchw_input_) {  // a strided 1x1 conv, an unpadded KxK one: the input as it is
      image_h_ = g_.in_h;
      image_w_ = g_.in_w;
    } else {
      padded_ = AlignedBuffer(static_cast<size_t>(g_.batch * image_h_ * image_w_ * g_.cin) * sizeof(float));
    }
    // Where each output pixel's window starts in the image, so that a row
    // tile may span output rows (gemm.h's ARows).
    row_offsets_.reserve(static_cast<size_t>(g_.batch * g_.out_pixels()));
    for (int64_t n = 0; n < g_.batch; ++n)
      for (int64_t oy = 0; oy < g_.out_h; ++oy)
        for (int64_t ox = 0; ox < g_.out_w; ++ox)
          row_offsets_.push_back(((n * image_h_ + oy * g_.stride_h) * image_w_ + ox * g_.stride_w) * g_.cin);
  }

  // NHWC, tap by tap, where most (tap, output pixel) pairs read padding:
  // DeepLab's ASPP convs, 3x3 dilated 12 on a 14x14 map, whose outer taps
  // reach two rows or columns of the map (324 of 1764 pairs), ran all nine
  // taps per pixel, 8.5 ms against ONNX Runtime's 1.7. Each tap reads the
  // input over the rectangle of output pixels whose input it reaches (a
  // row and a column interval, as the input index grows with the output's)
  // and adds its product into C. Whether this conv goes so: when at most
  // half the pairs read the input.
  bool plan_taps() {
    if (g_.taps() == 1) return false;
    std::vector<TapRange> taps;
    int64_t reached = 0;
    for (int64_t ky = 0; ky < g_.kernel_h; ++ky)
      for (int64_t kx = 0; kx < g_.kernel_w; ++kx) {
        const auto [oy0, oy1] = outputs_reaching_input(g_.in_h, g_.out_h, g_.stride_h, g_.pad_top, ky, g_.dilation_h);
        const auto [ox0, ox1] = outputs_reaching_input(g_.in_w, g_.out_w, g_.stride_w, g_.pad_left, kx, g_.dilation_w);
        if (oy1 > oy0 && ox1 > ox0) taps.push_back({ky * g_.kernel_w + kx, ky, kx, oy0, oy1, ox0, ox1});
        reached += (oy1 - oy0) * (ox1 - ox0);
      }
    if (2 * reached > g_.taps() * g_.out_pixels()) return false;
    taps_ = std::move(taps);
    band_rows_ = std::max<int64_t>(1, split_.band / g_.out_w);
    row_tasks_ = ceil_div(g_.batch * g_.out_h, band_rows_);
    return true;
  }

  void run_taps(const float* x, const float* panels, const float* residual, float* c) const {
    const GemmSplit& s = split_;
    const int64_t out_rows = g_.batch * g_.out_h, pixel_row = g_.out_w * s.ldc;
    const int64_t image_size = g_.in_h * g_.in_w * g_.cin;
    parallel_tasks(pool_, static_cast<size_t>(row_tasks_ * s.column_tasks), s.work() / 2, [&](size_t t) {
      const int64_t r0 = static_cast<int64_t>(t) / s.column_tasks * band_rows_;
      const int64_t r1 = std::min(out_rows, r0 + band_rows_);
      const int64_t b0 = static_cast<int64_t>(t) % s.column_tasks * s.run, b1 = std::min(b0 + s.run, s.blocks);
      const int64_t c0 = b0 * s.width, c1 = std::min(b1 * s.width, s.n);
      // C starts as the bias (and the residual, read before C's element is
      // written: C may be the residual's bytes), the residual last where
      // it follows the activation.
      for (int64_t i = r0 * g_.out_w; i < r1 * g_.out_w; ++i) {
        float* ci = c + i * s.ldc;
        const float* ri = residual && !residual_last_ ? residual + i * s.ldc : nullptr;
        for (int64_t j = c0; j < c1; ++j) ci[j] = bias_[static_cast<size_t>(j)] + (ri ? ri[j] : 0.f);
      }
      for (const TapRange& tap : taps_)
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t n = r / g_.out_h, oy = r % g_.out_h;
          if (oy < tap.oy0 || oy >= tap.oy1) continue;
          const ARows a{x + n * image_size + (g_.in_y(oy, tap.ky) * g_.in_w + g_.in_x(tap.ox0, tap.kx)) * g_.cin,
                        g_.stride_w * g_.cin};
          float* row = c + r * pixel_row + tap.ox0 * s.ldc;
          for (int64_t b = b0; b < b1; ++b) {
            const int64_t j0 = b * s.width;
            Epilogue e;
            e.residual = row + j0;  // the sums so far
            gemm_block_slice(tap.ox1 - tap.ox0, g_.cin, std::min(s.width, s.n - j0), a,
                             panels + j0 * s.k + tap.index * g_.cin * kPanel, s.k * kPanel, e, row + j0, s.ldc);
          }
        }
      for (int64_t i = r0 * g_.out_w; i < r1 * g_.out_w; ++i) {
        float* ci = c + i * s.ldc;
        for (int64_t j = c0; j < c1; ++j) ci[j] = ci[j] < lo_ ? lo_ : ci[j] > hi_ ? hi_ : ci[j];  // NaN stays
        if (!post_.empty()) post_.run(ci + c0, c1 - c0);
        if (residual && residual_last_) add_row(residual + i * s.ldc + c0, ci + c0, c1 - c0);
      }
    });
  }

  // The input's rows into padded_'s interior (from NCHW, transposed, for
  // an island input).
  // The packed weights with row k of every panel times scale_[k], into
  // scaled_panels_.
  const float* scale_panels() {
    const float* src = reinterpret_cast<const float*>(panels_.data());
    float* dst = reinterpret_cast<float*>(scaled_panels_.data());
    const float* s = scale_->data<float>();
    const int64_t depth = g_.depth(), panels = split_.padded_columns() / kPanel;
    parallel_tasks(pool_, static_cast<size_t>(panels), static_cast<double>(panels * depth * kPanel), [&](size_t p) {
      const float* in = src + static_cast<int64_t>(p) * depth * kPanel;
      float* out = dst + static_cast<int64_t>(p) * depth * kPanel;
      for (int64_t k = 0; k < depth; ++k)
        for (int64_t j = 0; j < kPanel; ++j) out[k * kPanel + j] = in[k * kPanel + j] * s[k];
    });
    return dst;
  }

  const float* pad(const float* x) {
    float* dst = reinterpret_cast<float*>(padded_.data());
    const int64_t rows = g_.batch * image_h_, cin = g_.cin, plane = g_.in_h * g_.in_w;
    const int64_t width = std::max<int64_t>(0, std::min(g_.in_w, image_w_ - g_.pad_left));
    // Split as the GEMM after it is (by its work, not the copy's): a copy
    // on one core that both cores' GEMM tasks then read sends half of it
    // across (ResNet-50's stride-2 3x3s copy 0.4-1.6 MB).
    parallel_tasks(pool_, static_cast<size_t>(rows), split_.work(), [&](size_t t) {
      const int64_t n = static_cast<int64_t>(t) / image_h_, iy = static_cast<int64_t>(t) % image_h_ - g_.pad_top;
      if (iy < 0 || iy >= g_.in_h) return;
      float* row = dst + (static_cast<int64_t>(t) * image_w_ + g_.pad_left) * cin;
      if (!nchw_input_) {
        const float* src = x + (n * g_.in_h + iy) * g_.in_w * cin;
        std::copy(src, src + width * cin, row);
        return;
      }
      const float* src = x + n * cin * plane + iy * g_.in_w;
      for (int64_t c = 0; c < cin; ++c)
        for (int64_t ix = 0; ix < width; ++ix) row[ix * cin + c] = src[c * plane + ix];
    });
    return dst;
  }

  // NHWC, gathered: each output pixel's window (tap by tap, Cin values
  // each, zeros over the padding), one row of A each.
  const float* gather(const float* x) {
    float* a = reinterpret_cast<float*>(gathered_.data());
    const int64_t rows = g_.batch * g_.out_h, depth = g_.depth();
    parallel_tasks(pool_, static_cast<size_t>(rows), split_.work(), [&](size_t r) {  // as the GEMM splits (pad())
      const int64_t n = static_cast<int64_t>(r) / g_.out_h, oy = static_cast<int64_t>(r) % g_.out_h;
      const float* image = x + n * g_.in_h * g_.in_w * g_.cin;
      float* dst = a + static_cast<int64_t>(r) * g_.out_w * depth;
      // A kernel row wholly inside the input is kernel_w x Cin consecutive
      // floats of an NHWC row (dilation 1): one copy, not one per tap (a
      // 7x7 stem on 3 channels copies 21 floats at once instead of 3).
      const bool rows_whole = g_.dilation_w == 1;
      for (int64_t ox = 0; ox < g_.out_w; ++ox)
        for (int64_t ky = 0; ky < g_.kernel_h; ++ky) {
          const int64_t iy = g_.in_y(oy, ky), ix0 = g_.in_x(ox, 0);
          const bool row_inside = iy >= 0 && iy < g_.in_h;
          if (row_inside && rows_whole && ix0 >= 0 && ix0 + g_.kernel_w <= g_.in_w) {
            const float* src = image + (iy * g_.in_w + ix0) * g_.cin;
            dst = std::copy(src, src + g_.kernel_w * g_.cin, dst);
            continue;
          }
          for (int64_t kx = 0; kx < g_.kernel_w; ++kx, dst += g_.cin) {
            const int64_t ix = g_.in_x(ox, kx);
            if (!row_inside || ix < 0 || ix >= g_.in_w) {
              std::fill(dst, dst + g_.cin, 0.f);
              continue;
            }
            const float* src = image + (iy * g_.in_w + ix) * g_.cin;
            std::copy(src, src + g_.cin, dst);
          }
        }
    });
    return a;
  }

  // NCHW: one image's windows as B's panels (k = Cin x taps + 1 rows of 16
  // pixels; row c x taps + t holds tap t of channel c, as W's columns).
  void pack_input(const float* x) {
    float* panels = reinterpret_cast<float*>(panels_.data());
    const int64_t k = split_.k, pixels = g_.out_pixels(), in_pixels = g_.in_h * g_.in_w, taps = g_.taps();
    const double work = static_cast<double>(k * pixels);
    parallel_tasks(pool_, static_cast<size_t>(split_.padded_columns() / kPanel), work, [&](size_t t) {
      const int64_t j0 = static_cast<int64_t>(t) * kPanel, width = std::max<int64_t>(0, std::min(kPanel, pixels - j0));
      float* panel = panels + static_cast<int64_t>(t) * k * kPanel;
      for (int64_t p = 0; p < k - 1; ++p) {
        const float* channel = x + p / taps * in_pixels;
        const int64_t* source = source_.data() + p % taps * pixels + j0;
        float* row = panel + p * kPanel;
        for (int64_t j = 0; j < width; ++j) row[j] = source[j] >= 0 ? channel[source[j]] : 0.f;
        for (int64_t j = width; j < kPanel; ++j) row[j] = 0.f;
      }
      std::fill(panel + (k - 1) * kPanel, panel + k * kPanel, 1.f);
    });
  }

  void run_gemm(const ARows& a, const float* panels, const float* bias, const float* residual, float* c) const {
    const GemmSplit& s = split_;
    parallel_tasks(pool_, static_cast<size_t>(s.tasks()), s.work(), [&](size_t t) {
      const int64_t i0 = static_cast<int64_t>(t) / s.column_tasks * s.band;
      const int64_t b0 = static_cast<int64_t>(t) % s.column_tasks * s.run;
      const int64_t rows = std::min(s.band, s.m - i0), b1 = std::min(b0 + s.run, s.blocks);
      const int64_t c0 = b0 * s.width, c1 = std::min(b1 * s.width, s.n);
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t j0 = b * s.width;
        Epilogue e;
        e.bias = bias ? bias + j0 : nullptr;
        e.residual = residual && !residual_last_ ? residual + i0 * s.ldc + j0 : nullptr;
        // The first band meets the weights first, from memory.
        e.next_panels = i0 == 0 && b + 1 < b1 ? panels + (j0 + s.width) * s.k : nullptr;
        e.min = lo_;
        e.max = hi_;
        gemm_block(rows, s.k, std::min(s.width, s.n - j0), a.from(i0), panels + j0 * s.k, e,
                   c + i0 * s.ldc + j0, s.ldc);
      }
      // The activations that are not a clamp (HardSwish, Sigmoid, SiLU...),
      // on the part of C this task wrote, still in cache; then a residual
      // that follows them.
      if (!post_.empty())
        for (int64_t i = i0; i < i0 + rows; ++i) post_.run(c + i * s.ldc + c0, c1 - c0);
      if (residual && residual_last_)
        for (int64_t i = i0; i < i0 + rows; ++i) add_row(residual + i * s.ldc + c0, c + i * s.ldc + c0, c1 - c0);
    });
  }

  // y[j] += r[j] for j < n.
  static void add_row(const float* r, float* y, int64_t n) {
    static const auto fn = Clones<add_floats>::best();
    fn(r, y, n);
  }

  const Tensor& x_;
  const Tensor* residual_;
  bool residual_last_ = false;  // added after the activation (add_residual_last)
  Geometry g_;
  bool nhwc_;
  bool nchw_input_;  // nhwc_ only: x is an island input, NCHW
  float lo_, hi_;          // the fused Relu or Clip (after the residual)
  ActivationPass post_;    // any other activation (fused, or a SiLU), after the GEMM
  TaskPool* pool_;
  GemmSplit split_;
  AlignedBuffer panels_;     // NHWC: W^T packed at init; NCHW: one image's input, packed per run
  std::vector<float> bias_;  // NHWC: [blocks * 32], zero past Cout
  AlignedBuffer gathered_;   // NHWC, gathered: [pixels x taps x Cin]
  // NHWC, windows read in place (plan_windows): the image they read
  // (image_h_ x image_w_ pixels, padded_ when it has a border) and where
  // in it each output pixel's window starts.
  bool windows_ = false;
  int64_t image_h_ = 0, image_w_ = 0;
  std::vector<int64_t> row_offsets_;
  // NHWC, tap by tap: the tasks' bands of output rows.
  int64_t band_rows_ = 0, row_tasks_ = 0;
  // NHWC, tap by tap (plan_taps): each tap that reaches the input, with the
  // rectangle of output pixels it reaches it from.
  struct TapRange {
    int64_t index, ky, kx, oy0, oy1, ox0, ox1;
  };
  std::vector<TapRange> taps_;
  AlignedBuffer padded_;
  std::vector<float> weights_;  // NCHW: [Cout x (Cin x taps + 1)], the bias last
  std::vector<int64_t> source_;  // NCHW: by tap, each output pixel's input pixel (-1: padding)
  const Tensor* scale_ = nullptr;  // the input's scale per channel, folded into the weights each run
  AlignedBuffer scaled_panels_;    // panels_ scaled so
};

// The op for ctx.node (checked by the caller) with what `group` fuses.
Result<std::unique_ptr<FastOp>> make_gemm_conv(const FastOpContext& ctx, const ConvGroup& group) {
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, xnnpack::read_conv(ctx.graph, ctx.node));
  HS_ASSIGN_OR_RETURN(const FusedActivation fused, read_fused_activation(ctx.node.attrs));
  if (group.activation != kNoNode && fused.kind != FusedActivation::Kind::kNone)
    return invalid_argument("a pointwise group with two activations");
  HS_ASSIGN_OR_RETURN(SplitActivation activation,
                      split_activation(fused, group.silu_mul != kNoNode ? ActivationPass::silu() : ActivationPass(), true,
                                       "pointwise group"));
  if (group.activation != kNoNode) {
    HS_ASSIGN_OR_RETURN(const xnnpack::Clamp clamp, xnnpack::read_clamp(ctx.graph, ctx.graph.node(group.activation)));
    activation.lo = std::max(activation.lo, clamp.min);
    activation.hi = std::min(activation.hi, clamp.max);
  }
  // With a scale Mul taken in, A is the Mul's other operand.
  const Tensor& x = group.scale_mul != kNoNode ? ctx.tensor_of(group.scaled) : ctx.input(0);
  Tensor& y = ctx.tensor_of(group.output);
  Geometry g;
  static_cast<ConvShape&>(g) = conv_shape(ctx.graph, ctx.node, p);
  const float* bias = ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue ? ctx.input(2).data<float>() : nullptr;
  const Tensor* residual = group.residual == kNoValue ? nullptr : &ctx.tensor_of(group.residual);
  const bool nchw_input = ctx.nhwc && ctx.nchw_input;
  if (nchw_input && !reads_windows(g)) return invalid_argument("an NHWC conv reading NCHW input needs its windows in place");
  const Tensor* scale = group.scale_mul != kNoNode ? &ctx.tensor_of(group.scale) : nullptr;
  if (scale && (!ctx.nhwc || nchw_input || g.gathers()))
    return invalid_argument("a 1x1 conv with its input's scale taken in runs unstrided on NHWC data only");
  auto op = std::make_unique<GemmConv>(x, y, residual, g, ctx.nhwc, nchw_input, ctx.input(1).data<float>(), bias,
                                       activation.lo, activation.hi, activation.pass, ctx.pool);
  if (scale) op->scale_input_by(scale);
  if (group.add_last) {
    if (group.activation != kNoNode) return invalid_argument("a residual added after the activation, then a clamp");
    op->add_residual_last();
  }
  return std::unique_ptr<FastOp>(std::move(op));
}

// What GemmConv runs: a group-1 conv of static f32 rank-4 tensors with
// constant weights and bias, any kernel, stride, dilation and padding.
Status gemm_conv_supported(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, read_fast_conv(graph, node));
  if (p.groups != 1) return unsupported("a grouped conv");
  return Status::ok();
}

bool is_1x1(const xnnpack::Window2d& win) {
  return win.kernel_h == 1 && win.kernel_w == 1 && !win.pad_top && !win.pad_left && !win.pad_bottom && !win.pad_right;
}

// The pointwise groups' convs: 1x1, unpadded.
Status shape_supported(const Graph& graph, const Node& node) {
  HS_RETURN_IF_ERROR(gemm_conv_supported(graph, node));
  if (!is_1x1(xnnpack::read_conv(graph, node).value().window)) return unsupported("not an unpadded 1x1 kernel");
  return Status::ok();
}

PointwiseShape shape_of(const Graph& graph, const Node& node, const xnnpack::Window2d& win) {
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  return {x[1], y[1], y[0] * y[2] * y[3], std::max<int64_t>(win.stride_h, win.stride_w)};
}

// The residual Add that alone reads `out` (what a group of conv `id`
// computes: the conv's output, or its activation), the other operand a
// run-time value of out's type that exists before the conv runs (the group
// runs at the conv's place), and that operand; {kNoNode, kNoValue} when
// there is none.
std::pair<NodeId, ValueId> residual_add_reading(const Graph& graph, NodeId id, ValueId out) {
  const NodeId add = sole_reader(graph, out);
  if (add == kNoNode) return {kNoNode, kNoValue};
  const Node& a = graph.node(add);
  if (a.op != "Add" || a.inputs.size() != 2 || a.inputs[0] == a.inputs[1]) return {kNoNode, kNoValue};
  const ValueId r = a.inputs[0] == out ? a.inputs[1] : a.inputs[0];
  const bool fits = graph.value(a.outputs[0]).type == graph.value(out).type && r != kNoValue &&
                    !graph.value(r).is_constant() && graph.value(r).type == graph.value(out).type &&
                    (graph.value(r).producer == kNoNode || graph.value(r).producer < id);
  return fits ? std::pair{add, r} : std::pair{kNoNode, kNoValue};
}

// The residual Add a group could take after `conv` itself (no activation
// of its own), and its other operand.
std::pair<NodeId, ValueId> residual_add_of(const Graph& graph, const Node& conv) {
  const Result<FusedActivation> own = read_fused_activation(conv.attrs);
  if (!own.is_ok() || own->kind != FusedActivation::Kind::kNone) return {kNoNode, kNoValue};
  return residual_add_reading(graph, graph.value(conv.outputs[0]).producer, conv.outputs[0]);
}

// The Mul before `conv` a group can fold into the conv's weights: the
// conv's input is Mul(x, s) with s a run-time [1, C, 1, 1] value (a
// squeeze-and-excitation block's gate) and x [1, C, H, W], read by the
// conv alone, the conv unstrided; and the weights' C x Cout floats, scaled
// into a copy on every run, at most an eighth of the C x H x W the Mul
// would have read and written. At parity (Cout < H x W) EfficientNet-B0's
// 14x14 stage ran slower (a 672 -> 112 projection 0.192 -> 0.229 ms with
// its Mul, 1 thread on the 2-core Xeon); at an eighth, its 56x56 and 28x28
// stages fold and the model ran 9.35 -> 8.99 ms (5.68 -> 5.54 at 2).
// {kNoNode, kNoValue, kNoValue} when there is none.
constexpr int64_t kScaleFoldPixelsPerOutput = 8;
std::tuple<NodeId, ValueId, ValueId> scale_before(const Graph& graph, const Node& conv) {
  const std::tuple<NodeId, ValueId, ValueId> none{kNoNode, kNoValue, kNoValue};
  const ValueId in = conv.inputs[0];
  const NodeId mul = graph.value(in).producer;
  if (mul == kNoNode || graph.node(mul).op != "Mul" || sole_reader(graph, in) == kNoNode) return none;
  const xnnpack::Window2d win = xnnpack::read_conv(graph, conv).value().window;
  if (win.stride_h != 1 || win.stride_w != 1) return none;
  const Node& m = graph.node(mul);
  if (m.inputs.size() != 2 || m.inputs[0] == kNoValue || m.inputs[1] == kNoValue) return none;
  const Shape& out = graph.value(in).type.shape;
  for (int side = 0; side < 2; ++side) {
    const ValueId x = m.inputs[side], s = m.inputs[1 - side];
    const Value& xv = graph.value(x);
    const Value& sv = graph.value(s);
    if (xv.is_constant() || sv.is_constant() || !xv.type_known || !sv.type_known) continue;
    if (xv.type != graph.value(in).type || sv.type.dtype != DType::kFloat32) continue;
    if (sv.type.shape != Shape{1, out[1], 1, 1} || out[0] != 1) continue;
    if (xnnpack::is_island_input(graph, x)) continue;  // an NHWC step reads those in the caller's order
    const int64_t cout = graph.value(conv.outputs[0]).type.shape[1];
    if (cout * kScaleFoldPixelsPerOutput >= out[2] * out[3]) return none;
    return {mul, x, s};
  }
  return none;
}

Status supports(const Graph& graph, const Node& node, int threads) {
  HS_RETURN_IF_ERROR(shape_supported(graph, node));
  const PointwiseChoice choice = pointwise_choice();
  if (choice == PointwiseChoice::kOff) return unsupported("HETSCHED_POINTWISE=off");
  if (choice == PointwiseChoice::kRule) {
    const PointwiseShape shape = shape_of(graph, node, xnnpack::read_conv(graph, node).value().window);
    // A conv the rule leaves on XNNPACK alone may still pay with its
    // residual Add in the epilogue (pointwise_residual_pays).
    if (!pointwise_pays(shape, threads) &&
        !(residual_add_of(graph, node).first != kNoNode && pointwise_residual_pays(shape)))
      return unsupported("XNNPACK's 1x1 conv is faster at this shape (pointwise_rule.h)");
  }
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> create_lone(const FastOpContext& ctx) {
  ConvGroup group;  // the conv alone; make_pointwise reads ctx.node
  group.output = ctx.node.outputs[0];
  return make_pointwise(ctx, group);
}

// A dense conv the fast GEMM takes: not 1x1, not one Winograd takes, and
// HETSCHED_DENSE_CONV or dense_conv_pays() says so.
Status dense_supported(const Graph& graph, const Node& node, int threads) {
  HS_RETURN_IF_ERROR(gemm_conv_supported(graph, node));
  const xnnpack::ConvParams p = xnnpack::read_conv(graph, node).value();
  const xnnpack::Window2d& win = p.window;
  if (is_1x1(win)) return unsupported("a 1x1 conv (pointwise_conv.h)");
  if (winograd_conv_leaves_xnnpack(graph, node, threads)) return unsupported("Winograd takes it (winograd_conv.cc)");
  const DenseConvChoice choice = dense_conv_choice();
  if (choice == DenseConvChoice::kOff) return unsupported("HETSCHED_DENSE_CONV=off");
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  const ConvShape conv = conv_shape(graph, node, p);
  const DenseConvShape shape{x[1],
                             y[1],
                             int64_t{win.kernel_h} * win.kernel_w,
                             y[0] * y[2] * y[3],
                             std::max<int64_t>(win.stride_h, win.stride_w),
                             reads_windows(conv),
                             stem_conv_fits(conv) && threads <= kMaxNarrowThreads};
  if (choice == DenseConvChoice::kRule && !dense_conv_pays(shape))
    return unsupported("XNNPACK's conv is faster at this shape (dense_conv_rule.h)");
  return Status::ok();
}

// The stem kernel where it runs the conv (NHWC), else the fast GEMM.
Result<std::unique_ptr<FastOp>> make_dense(const FastOpContext& ctx, const ConvGroup& group) {
  HS_RETURN_IF_ERROR(dense_supported(ctx.graph, ctx.node, ctx.threads()));
  if (ctx.nhwc && group.residual == kNoValue &&
      stem_conv_fits(conv_shape(ctx.graph, ctx.node, xnnpack::read_conv(ctx.graph, ctx.node).value())))
    return make_stem_conv(ctx, group);
  return make_gemm_conv(ctx, group);
}

Result<std::unique_ptr<FastOp>> create_dense(const FastOpContext& ctx) {
  ConvGroup group;  // the conv alone
  group.output = ctx.node.outputs[0];
  return make_dense(ctx, group);
}

}  // namespace

bool pointwise_conv_leaves_xnnpack(const Graph& graph, const Node& node, int threads) {
  return node.op == "Conv" && supports(graph, node, threads).is_ok();
}

void add_after_activation(const Graph& graph, ConvGroup& g) {
  const auto [add, r] = residual_add_reading(graph, g.conv, g.output);
  if (add == kNoNode) return;
  g.add = add;
  g.residual = r;
  g.output = graph.node(add).outputs[0];
  g.add_last = true;
}

std::vector<ConvGroup> find_pointwise_groups(const Graph& graph, int threads) {
  std::vector<ConvGroup> groups;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& conv = graph.node(id);
    if (!pointwise_conv_leaves_xnnpack(graph, conv, threads)) continue;
    ConvGroup g;
    g.conv = id;
    g.output = conv.outputs[0];
    const Result<FusedActivation> own = read_fused_activation(conv.attrs);
    const auto [add, r] = residual_add_of(graph, conv);
    if (add != kNoNode) {
      const Node& a = graph.node(add);
      const bool fits = pointwise_choice() == PointwiseChoice::kOn ||
                        pointwise_residual_pays(shape_of(graph, conv, xnnpack::read_conv(graph, conv).value().window));
      if (fits) {
        g.add = add;
        g.residual = r;
        g.output = a.outputs[0];
        const NodeId act = sole_reader(graph, g.output);
        if (act != kNoNode && (graph.node(act).op == "Relu" || graph.node(act).op == "Clip") &&
            xnnpack::read_clamp(graph, graph.node(act)).is_ok()) {
          g.activation = act;
          g.output = graph.node(act).outputs[0];
        }
      }
    }
    if (g.add == kNoNode && own.is_ok() && own->kind == FusedActivation::Kind::kNone)
      if (const std::optional<SiluGroup> silu = silu_reading(graph, g.output)) {
        g.silu_sigmoid = silu->sigmoid;
        g.silu_mul = silu->mul;
        g.output = silu->output;
      }
    if (g.add == kNoNode && own.is_ok() && (g.silu_mul != kNoNode || own->kind != FusedActivation::Kind::kNone) &&
        (pointwise_choice() == PointwiseChoice::kOn ||
         pointwise_residual_pays(shape_of(graph, conv, xnnpack::read_conv(graph, conv).value().window))))
      add_after_activation(graph, g);
    if (const auto [mul, x, s] = scale_before(graph, conv); mul != kNoNode) {
      g.scale_mul = mul;
      g.scaled = x;
      g.scale = s;
    }
    groups.push_back(g);
  }
  return groups;
}

Result<std::unique_ptr<FastOp>> make_pointwise(const FastOpContext& ctx, const ConvGroup& group) {
  HS_RETURN_IF_ERROR(supports(ctx.graph, ctx.node, ctx.threads()));
  return make_gemm_conv(ctx, group);
}

Result<std::unique_ptr<FastOp>> make_dense_conv_group(const FastOpContext& ctx, const ConvGroup& group) {
  return make_dense(ctx, group);
}

FastOpKind pointwise_conv_kind() { return {"Conv", false, supports, create_lone}; }

FastOpKind dense_conv_kind() { return {"Conv", false, dense_supported, create_dense}; }

bool dense_conv_leaves_xnnpack(const Graph& graph, const Node& node, int threads) {
  return node.op == "Conv" && dense_supported(graph, node, threads).is_ok();
}

bool dense_conv_reads_windows(const Graph& graph, const Node& node, int threads) {
  return dense_conv_leaves_xnnpack(graph, node, threads) &&
         reads_windows(conv_shape(graph, node, xnnpack::read_conv(graph, node).value()));
}

}  // namespace hetsched::cpu::fast
