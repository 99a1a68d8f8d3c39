// Portable Resize kernel for 4-D NCHW f32 (registered from tensor.cc):
// nearest, bilinear and bicubic on H and W, with ONNX's coordinate
// transformations.
//
// Each output row/column is mapped back to the input once per axis (a
// table), then every N*C plane is filled from those tables in parallel.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/resize_taps.h"

namespace hetsched::cpu {

void register_resize_kernels(KernelTable& table);

namespace {

using Transform = ResizeTransform;
using Rounding = ResizeRounding;

struct ResizeParams {
  bool linear = false;
  bool cubic = false;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  Transform transform = Transform::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  double scale_h = 1.0, scale_w = 1.0;
};

// Attribute `attr` (default `fallback`) as `named` reads it.
template <typename Named>
auto pick(const KernelContext& ctx, const std::string& attr, const std::string& fallback, Named named)
    -> Result<typename decltype(named(std::string_view{}))::value_type> {
  Result<std::string> v = ctx.attrs().get_string(attr, fallback);
  if (!v.is_ok()) return ctx.error(v.status().message());
  if (const auto e = named(*v)) return *e;
  return unsupported("node '" + ctx.node.name + "' (" + ctx.node.op + "): attribute '" + attr + "' = '" + *v +
                     "' is not supported");
}

std::optional<bool> linear_named(std::string_view mode) {
  if (mode == "nearest") return false;
  if (mode == "linear") return true;
  return std::nullopt;
}

// An input that may be omitted or empty: nullptr then.
const Tensor* optional_input(const KernelContext& ctx, size_t i) {
  return ctx.has_input(i) && ctx.in(i).num_elements() > 0 ? &ctx.in(i) : nullptr;
}

Result<ResizeParams> read_params(const KernelContext& ctx, const Tensor& x, const Tensor& y) {
  ResizeParams p;
  HS_ASSIGN_OR_RETURN(const std::string mode, ctx.attrs().get_string("mode", "nearest"));
  p.cubic = mode == "cubic";
  if (p.cubic) {
    HS_ASSIGN_OR_RETURN(const float a, ctx.attrs().get_float("cubic_coeff_a", -0.75f));
    HS_ASSIGN_OR_RETURN(const int64_t exclude, ctx.attrs().get_int("exclude_outside", 0));
    p.cubic_a = a;
    p.exclude_outside = exclude != 0;
  } else {
    HS_ASSIGN_OR_RETURN(p.linear, pick(ctx, "mode", "nearest", linear_named));
  }
  const Tensor* scales = nullptr;
  if (ctx.opset < 11) {
    // Resize-10 is what ONNX's version converter turns into asymmetric + floor at opset 11.
    p.transform = Transform::kAsymmetric;
    p.rounding = Rounding::kFloor;
    scales = optional_input(ctx, 1);
    if (!scales) return ctx.error("scales input is missing");
  } else {
    HS_ASSIGN_OR_RETURN(p.transform,
                        pick(ctx, "coordinate_transformation_mode", "half_pixel", resize_transform_named));
    HS_ASSIGN_OR_RETURN(p.rounding, pick(ctx, "nearest_mode", "round_prefer_floor", resize_rounding_named));
    scales = optional_input(ctx, 2);
  }
  if (scales) {
    if (scales->dtype() != DType::kFloat32 || scales->num_elements() != 4)
      return ctx.error("scales must be 4 f32 values, got " + scales->type().to_string());
    p.scale_h = scales->data<float>()[2];
    p.scale_w = scales->data<float>()[3];
  } else {
    // Given sizes, ONNX defines the scale as output / input length.
    p.scale_h = static_cast<double>(y.shape()[2]) / static_cast<double>(x.shape()[2]);
    p.scale_w = static_cast<double>(y.shape()[3]) / static_cast<double>(x.shape()[3]);
  }
  if (!(p.scale_h > 0.0) || !(p.scale_w > 0.0)) return ctx.error("scales must be positive");
  return p;
}

std::vector<ResizeTap> axis_taps(const ResizeParams& p, double scale, int64_t in_len, int64_t out_len) {
  return resize_axis_taps(p.linear, p.transform, p.rounding, scale, in_len, out_len);
}

Status resize_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  if (x.dtype() != DType::kFloat32 || y.dtype() != DType::kFloat32 || x.shape().size() != 4 || y.shape().size() != 4 ||
      x.shape()[0] != y.shape()[0] || x.shape()[1] != y.shape()[1])
    return ctx.error("input " + x.type().to_string() + " and output " + y.type().to_string() +
                     " are not 4-D f32 with the same N and C");
  HS_ASSIGN_OR_RETURN(ResizeParams p, read_params(ctx, x, y));
  const int64_t in_h = x.shape()[2], in_w = x.shape()[3];
  const int64_t out_h = y.shape()[2], out_w = y.shape()[3];
  const int64_t planes = x.shape()[0] * x.shape()[1];
  if (planes == 0 || out_h == 0 || out_w == 0) return Status::ok();
  if (in_h == 0 || in_w == 0) return ctx.error("cannot resize an empty input " + x.type().to_string());
  if (p.cubic) {
    const std::vector<ResizeCubicTap> rows =
        resize_axis_cubic_taps(p.transform, p.scale_h, in_h, out_h, p.cubic_a, p.exclude_outside);
    const std::vector<ResizeCubicTap> cols =
        resize_axis_cubic_taps(p.transform, p.scale_w, in_w, out_w, p.cubic_a, p.exclude_outside);
    parallel_for_each(planes, [&](int64_t plane) {
      const float* src = x.data<float>() + plane * in_h * in_w;
      float* dst = y.data<float>() + plane * out_h * out_w;
      for (const ResizeCubicTap& r : rows)
        for (const ResizeCubicTap& c : cols) {
          float sum = 0.f;
          for (int i = 0; i < 4; ++i) {
            const float* row = src + r.index[i] * in_w;
            sum += r.w[i] * (c.w[0] * row[c.index[0]] + c.w[1] * row[c.index[1]] + c.w[2] * row[c.index[2]] +
                             c.w[3] * row[c.index[3]]);
          }
          *dst++ = sum;
        }
    });
    return Status::ok();
  }
  const std::vector<ResizeTap> rows = axis_taps(p, p.scale_h, in_h, out_h);
  const std::vector<ResizeTap> cols = axis_taps(p, p.scale_w, in_w, out_w);

  parallel_for_each(planes, [&](int64_t plane) {
    const float* src = x.data<float>() + plane * in_h * in_w;
    float* dst = y.data<float>() + plane * out_h * out_w;
    for (const ResizeTap& r : rows) {
      const float* top = src + r.lo * in_w;
      const float* bottom = src + r.hi * in_w;
      for (const ResizeTap& c : cols) {
        if (!p.linear) {
          *dst++ = top[c.lo];
          continue;
        }
        const float t = top[c.lo] + (top[c.hi] - top[c.lo]) * c.w;
        const float b = bottom[c.lo] + (bottom[c.hi] - bottom[c.lo]) * c.w;
        *dst++ = t + (b - t) * r.w;
      }
    }
  });
  return Status::ok();
}

}  // namespace

void register_resize_kernels(KernelTable& table) { table.emplace("Resize", resize_kernel); }

}  // namespace hetsched::cpu
