// Portable Resize kernel for f32 of any rank (registered from tensor.cc):
// nearest, linear and cubic on any dims (opset 18's `axes` among them),
// with ONNX's coordinate transformations; H and W of NCHW in one pass.
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
  std::vector<double> scales;  // per dim of X
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
  const Tensor* sizes = nullptr;
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
    sizes = scales ? nullptr : optional_input(ctx, 3);
  }
  Result<ResizeDims> dims = resize_dims(ctx.attrs(), ctx.opset, x.shape(), scales, sizes);
  if (!dims.is_ok()) return ctx.error(dims.status().message());
  if (dims->out != y.shape())
    return ctx.error("output " + y.type().to_string() + " is not the resized shape " + shape_to_string(dims->out));
  p.scales = std::move(dims->scales);
  return p;
}

std::vector<ResizeTap> axis_taps(const ResizeParams& p, double scale, int64_t in_len, int64_t out_len) {
  return resize_axis_taps(p.linear, p.transform, p.rounding, scale, in_len, out_len);
}

// One dim's taps in one form for every mode: `count` (input index, weight)
// pairs per output coordinate.
struct AxisTaps {
  int count = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

AxisTaps any_axis_taps(const ResizeParams& p, double scale, int64_t in_len, int64_t out_len) {
  AxisTaps t;
  if (p.cubic) {
    t.count = 4;
    for (const ResizeCubicTap& c : resize_axis_cubic_taps(p.transform, scale, in_len, out_len, p.cubic_a,
                                                          p.exclude_outside))
      for (int k = 0; k < 4; ++k) {
        t.index.push_back(c.index[k]);
        t.weight.push_back(c.w[k]);
      }
    return t;
  }
  t.count = p.linear ? 2 : 1;
  for (const ResizeTap& c : axis_taps(p, scale, in_len, out_len)) {
    t.index.push_back(c.lo);
    t.weight.push_back(p.linear ? 1.f - c.w : 1.f);
    if (p.linear) {
      t.index.push_back(c.hi);
      t.weight.push_back(c.w);
    }
  }
  return t;
}

// Any rank, any dims: one pass per resized dim, each interpolating whole
// inner rows (ONNX's N-D interpolation is separable: nested 1-D ones).
void resize_by_axes(const ResizeParams& p, const Tensor& x, Tensor& y) {
  std::vector<float> current(x.data<float>(), x.data<float>() + x.num_elements()), next;
  Shape shape = x.shape();
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t in_len = shape[d], out_len = y.shape()[d];
    if (in_len == out_len && p.scales[d] == 1.0) continue;  // every transformation maps o to o
    const AxisTaps taps = any_axis_taps(p, p.scales[d], in_len, out_len);
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < d; ++k) outer *= shape[k];
    for (size_t k = d + 1; k < shape.size(); ++k) inner *= shape[k];
    next.assign(static_cast<size_t>(outer * out_len * inner), 0.f);
    parallel_for_each(outer, [&](int64_t o) {
      const float* src = current.data() + o * in_len * inner;
      float* dst = next.data() + o * out_len * inner;
      for (int64_t j = 0; j < out_len; ++j)
        for (int k = 0; k < taps.count; ++k) {
          const size_t t = static_cast<size_t>(j * taps.count + k);
          const float w = taps.weight[t];
          const float* row = src + taps.index[t] * inner;
          for (int64_t i = 0; i < inner; ++i) dst[j * inner + i] += w * row[i];
        }
    });
    shape[d] = out_len;
    current.swap(next);
  }
  std::copy(current.begin(), current.end(), y.data<float>());
}

Status resize_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  if (x.dtype() != DType::kFloat32 || y.dtype() != DType::kFloat32 || x.shape().size() != y.shape().size())
    return ctx.error("input " + x.type().to_string() + " and output " + y.type().to_string() +
                     " are not f32 of one rank");
  HS_ASSIGN_OR_RETURN(ResizeParams p, read_params(ctx, x, y));
  if (y.num_elements() == 0) return Status::ok();
  if (x.num_elements() == 0) return ctx.error("cannot resize an empty input " + x.type().to_string());
  // H and W of NCHW in one pass over each plane; any other form dim by dim.
  if (x.shape().size() != 4 || x.shape()[0] != y.shape()[0] || x.shape()[1] != y.shape()[1] || p.scales[0] != 1.0 ||
      p.scales[1] != 1.0) {
    resize_by_axes(p, x, y);
    return Status::ok();
  }
  const double scale_h = p.scales[2], scale_w = p.scales[3];
  const int64_t in_h = x.shape()[2], in_w = x.shape()[3];
  const int64_t out_h = y.shape()[2], out_w = y.shape()[3];
  const int64_t planes = x.shape()[0] * x.shape()[1];
  if (p.cubic) {
    const std::vector<ResizeCubicTap> rows =
        resize_axis_cubic_taps(p.transform, scale_h, in_h, out_h, p.cubic_a, p.exclude_outside);
    const std::vector<ResizeCubicTap> cols =
        resize_axis_cubic_taps(p.transform, scale_w, in_w, out_w, p.cubic_a, p.exclude_outside);
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
  const std::vector<ResizeTap> rows = axis_taps(p, scale_h, in_h, out_h);
  const std::vector<ResizeTap> cols = axis_taps(p, scale_w, in_w, out_w);

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
