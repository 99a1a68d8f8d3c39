// Resize (nearest and linear on H and W) into the graph's order, from the
// graph's order or from NHWC data (an island output made from a value kept
// NHWC, fast_plan.h), separably:
// each input row a bilinear Resize reads is first resized along W into a
// row of the output's width, then every output row is one lerp of two such
// rows (nearest: one copy), contiguous and vectorised.
//
// A segmentation network's last op resizes its class maps to the input's
// size (DeepLabV3, LR-ASPP, FCN: 21 maps of 28x28 to 224x224). Alone in an
// XNNPACK segment it paid two layout conversions of the output around
// XNNPACK's NHWC resize (DeepLabV3 MobileNetV3-Large: 1.2 ms, ONNX Runtime
// 0.6), and the portable kernel lerps each output pixel from four input
// pixels through its tap tables. Upsampling by s in H, this does 1/s of
// that work along W, and the rest is two loads, a subtract and an FMA per
// output. The arithmetic is the portable kernel's (W first, then H, with
// graph/resize_taps.h's taps), so the two agree to rounding.
#include <algorithm>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "graph/resize_taps.h"

namespace hetsched::cpu::fast {

namespace {

class Resize final : public FastOp {
 public:
  // `nhwc_input`: x holds NHWC data (the output is written NCHW either way).
  Resize(const Tensor& x, Tensor& y, const ResizeMapping& m, bool nhwc_input, TaskPool* pool)
      : FastOp(y), x_(x), linear_(m.linear), nhwc_input_(nhwc_input), pool_(pool) {
    const Shape& xs = x.shape();
    const Shape& ys = y.shape();
    channels_ = xs[1];
    planes_ = xs[0] * xs[1];
    in_h_ = xs[2];
    in_w_ = xs[3];
    out_h_ = ys[2];
    out_w_ = ys[3];
    rows_ = resize_axis_taps(m.linear, m.transform, m.rounding, m.scale_h, in_h_, out_h_);
    cols_ = resize_axis_taps(m.linear, m.transform, m.rounding, m.scale_w, in_w_, out_w_);
    // The input rows some output row reads, each resized along W once into
    // its slot of wide_ (the others are never computed).
    std::vector<bool> read(static_cast<size_t>(in_h_), false);
    for (const ResizeTap& r : rows_) {
      read[static_cast<size_t>(r.lo)] = true;
      if (linear_) read[static_cast<size_t>(r.hi)] = true;
    }
    for (int64_t iy = 0; iy < in_h_; ++iy)
      if (read[static_cast<size_t>(iy)]) read_rows_.push_back(iy);
    wide_.resize(static_cast<size_t>(planes_ * in_h_ * out_w_));
    band_ = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, out_w_));
  }

  Status run() override {
    const float* x = x_.data<float>();
    float* y = out();
    float* wide = wide_.data();
    const int64_t read_rows = static_cast<int64_t>(read_rows_.size());
    const int64_t bands = (out_h_ + band_ - 1) / band_;
    // Both passes split over the pool or neither, by their work in all.
    const double work = 3.0 * static_cast<double>(planes_ * out_w_ * (read_rows + out_h_));
    parallel_tasks(pool_, static_cast<size_t>(planes_ * read_rows), work, [&](size_t t) {
      const int64_t plane = static_cast<int64_t>(t) / read_rows;
      const int64_t iy = read_rows_[static_cast<size_t>(static_cast<int64_t>(t) % read_rows)];
      // The row's pixels, `step` floats apart (NHWC: a channel of each).
      const int64_t n = plane / channels_, channel = plane % channels_;
      const float* src = nhwc_input_ ? x + (n * in_h_ + iy) * in_w_ * channels_ + channel : x + (plane * in_h_ + iy) * in_w_;
      const int64_t step = nhwc_input_ ? channels_ : 1;
      float* dst = wide + (plane * in_h_ + iy) * out_w_;
      if (!linear_) {
        for (int64_t c = 0; c < out_w_; ++c) dst[c] = src[cols_[static_cast<size_t>(c)].lo * step];
        return;
      }
      for (int64_t c = 0; c < out_w_; ++c) {
        const ResizeTap& tap = cols_[static_cast<size_t>(c)];
        const float lo = src[tap.lo * step], hi = src[tap.hi * step];
        dst[c] = lo + (hi - lo) * tap.w;
      }
    });
    parallel_tasks(pool_, static_cast<size_t>(planes_ * bands), work, [&](size_t t) {
      const int64_t plane = static_cast<int64_t>(t) / bands, first = static_cast<int64_t>(t) % bands * band_;
      const float* rows = wide + plane * in_h_ * out_w_;
      for (int64_t oy = first; oy < std::min(out_h_, first + band_); ++oy) {
        const ResizeTap& tap = rows_[static_cast<size_t>(oy)];
        float* __restrict dst = y + (plane * out_h_ + oy) * out_w_;
        const float* __restrict top = rows + tap.lo * out_w_;
        if (!linear_) {
          std::copy(top, top + out_w_, dst);
          continue;
        }
        const float* __restrict bottom = rows + tap.hi * out_w_;
        const float w = tap.w;
        for (int64_t c = 0; c < out_w_; ++c) dst[c] = top[c] + (bottom[c] - top[c]) * w;
      }
    });
    return Status::ok();
  }

 private:
  const Tensor& x_;
  bool linear_;
  bool nhwc_input_;
  TaskPool* pool_;
  int64_t channels_ = 0, planes_ = 0, in_h_ = 0, in_w_ = 0, out_h_ = 0, out_w_ = 0;
  std::vector<ResizeTap> rows_, cols_;
  std::vector<int64_t> read_rows_;  // the input rows some output row reads
  std::vector<float> wide_;         // [planes][in_h][out_w]: read rows resized along W
  int64_t band_ = 1;                // output rows per task of the second pass
};

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
  return read_resize_mapping(graph, node).status();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  HS_ASSIGN_OR_RETURN(const ResizeMapping m, read_resize_mapping(ctx.graph, ctx.node));
  if (ctx.nhwc && !ctx.nchw_output) return invalid_argument("the fast Resize writes the graph's order only");
  return std::unique_ptr<FastOp>(new Resize(ctx.input(0), ctx.output(0), m, ctx.nhwc, ctx.pool));
}

}  // namespace

FastOpKind resize_kind() { return {"Resize", true, supports, create}; }

}  // namespace hetsched::cpu::fast
