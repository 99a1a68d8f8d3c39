// RoiAlign's portable kernel (graph/roi_align.h), as ONNX's reference and
// ONNX Runtime compute it (after Caffe2): each output bin averages (or, in
// max mode, takes the largest weighted corner of) a grid of bilinear
// samples. A sample more than a pixel off the map counts as zero; one
// within a pixel of it reads the nearest edge.
#include <algorithm>
#include <cmath>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/roi_align.h"

namespace hetsched::cpu {

namespace {

// One bilinear sample: four pixel offsets into a channel plane and their
// weights (all zero for a sample off the map).
struct Sample {
  int64_t pos[4] = {};
  float w[4] = {};
};

Sample bilinear_sample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  // Written so that a NaN coordinate is off the map too.
  if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 && x <= static_cast<double>(width))) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = static_cast<float>(hy * hx);
  s.w[1] = static_cast<float>(hy * lx);
  s.w[2] = static_cast<float>(ly * hx);
  s.w[3] = static_cast<float>(ly * lx);
  return s;
}

}  // namespace

Status roi_align_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const RoiAlignParams p, roi_align_params(ctx.attrs(), ctx.opset));
  const Tensor& x = ctx.in(0);
  const Tensor& rois = ctx.in(1);
  const Tensor& batch = ctx.in(2);
  HS_ASSIGN_OR_RETURN(const Shape out, roi_align_output_shape(p, x.type(), rois.type(), batch.type()));
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, out}));
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t R = out[0], PH = p.output_height, PW = p.output_width;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = batch.data<int64_t>()[r];
    if (b < 0 || b >= N)
      return invalid_argument("batch_indices[" + std::to_string(r) + "] = " + std::to_string(b) +
                              " is not an image of X's batch of " + std::to_string(N));
  }
  // A roi must be finite, and an adaptive sampling grid (sampling_ratio
  // 0: ceil(roi size / bin count) a side) of bounded size.
  constexpr double kMaxGridSide = 1024;
  for (int64_t r = 0; r < R; ++r) {
    const float* roi = rois.data<float>() + r * 4;
    for (int k = 0; k < 4; ++k)
      if (!std::isfinite(roi[k]))
        return invalid_argument("rois[" + std::to_string(r) + "] has a coordinate that is not finite");
    const double w = (roi[2] - roi[0]) * p.spatial_scale, h = (roi[3] - roi[1]) * p.spatial_scale;
    if (p.sampling_ratio == 0 && (w / PW > kMaxGridSide || h / PH > kMaxGridSide))
      return invalid_argument("rois[" + std::to_string(r) + "] spans " + std::to_string(w) + " x " + std::to_string(h) +
                              " pixels: more than 1024 samples a bin side (set sampling_ratio)");
  }
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  const double offset = p.half_pixel ? 0.5 : 0.0;
  parallel_for_each(R, [&](int64_t r) {
    const float* roi = rois.data<float>() + r * 4;
    const double x1 = roi[0] * p.spatial_scale - offset, y1 = roi[1] * p.spatial_scale - offset;
    const double x2 = roi[2] * p.spatial_scale - offset, y2 = roi[3] * p.spatial_scale - offset;
    double roi_w = x2 - x1, roi_h = y2 - y1;
    if (!p.half_pixel) {  // output_half_pixel: rois at least one pixel a side
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    const double bin_h = roi_h / static_cast<double>(PH), bin_w = roi_w / static_cast<double>(PW);
    const int64_t grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(roi_h / PH));
    const int64_t grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(roi_w / PW));
    const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
    // Every bin's samples, then each channel reads them.
    std::vector<Sample> samples;
    samples.reserve(static_cast<size_t>(PH * PW * std::max<int64_t>(grid_h * grid_w, 0)));
    for (int64_t ph = 0; ph < PH; ++ph)
      for (int64_t pw = 0; pw < PW; ++pw)
        for (int64_t iy = 0; iy < grid_h; ++iy)
          for (int64_t ix = 0; ix < grid_w; ++ix)
            samples.push_back(bilinear_sample(
                y1 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h),
                x1 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w),
                H, W));
    const int64_t per_bin = grid_h * grid_w;
    const int64_t b = batch.data<int64_t>()[r];
    for (int64_t c = 0; c < C; ++c) {
      const float* plane = px + (b * C + c) * H * W;
      float* dst = py + (r * C + c) * PH * PW;
      for (int64_t bin = 0; bin < PH * PW; ++bin) {
        const Sample* s = samples.data() + bin * per_bin;
        if (p.max_mode) {
          // ONNX's max mode: the largest weighted corner over the samples.
          float best = 0.f;
          for (int64_t k = 0; k < per_bin; ++k) {
            float v = s[k].w[0] * plane[s[k].pos[0]];
            for (int q = 1; q < 4; ++q) v = std::max(v, s[k].w[q] * plane[s[k].pos[q]]);
            best = k == 0 ? v : std::max(best, v);
          }
          dst[bin] = best;
        } else {
          double sum = 0.0;
          for (int64_t k = 0; k < per_bin; ++k)
            for (int q = 0; q < 4; ++q) sum += static_cast<double>(s[k].w[q]) * plane[s[k].pos[q]];
          dst[bin] = static_cast<float>(sum / count);
        }
      }
    }
  });
  return Status::ok();
}

}  // namespace hetsched::cpu
