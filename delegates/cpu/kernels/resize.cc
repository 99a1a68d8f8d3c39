// Portable Resize kernel for 4-D NCHW f32 (registered from tensor.cc):
// nearest and bilinear on H and W, with ONNX's coordinate transformations.
//
// Each output row/column is mapped back to the input once per axis (a
// table), then every N*C plane is filled from those tables in parallel.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "delegates/cpu/kernel.h"

namespace hetsched::cpu {

void register_resize_kernels(KernelTable& table);

namespace {

enum class Transform { kHalfPixel, kAsymmetric, kAlignCorners, kPytorchHalfPixel, kTfHalfPixelForNearest };
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeParams {
  bool linear = false;
  Transform transform = Transform::kHalfPixel;
  Rounding rounding = Rounding::kRoundPreferFloor;
  double scale_h = 1.0, scale_w = 1.0;
};

template <typename E>
Result<E> pick(const KernelContext& ctx, const std::string& attr, const std::string& fallback,
               std::initializer_list<std::pair<std::string_view, E>> choices) {
  Result<std::string> v = ctx.attrs().get_string(attr, fallback);
  if (!v.is_ok()) return ctx.error(v.status().message());
  for (const auto& [name, e] : choices)
    if (name == *v) return e;
  return unsupported("node '" + ctx.node.name + "' (" + ctx.node.op + "): attribute '" + attr + "' = '" + *v +
                     "' is not supported");
}

// An input that may be omitted or empty: nullptr then.
const Tensor* optional_input(const KernelContext& ctx, size_t i) {
  return ctx.has_input(i) && ctx.in(i).num_elements() > 0 ? &ctx.in(i) : nullptr;
}

Result<ResizeParams> read_params(const KernelContext& ctx, const Tensor& x, const Tensor& y) {
  ResizeParams p;
  HS_ASSIGN_OR_RETURN(p.linear, pick<bool>(ctx, "mode", "nearest", {{"nearest", false}, {"linear", true}}));
  const Tensor* scales = nullptr;
  if (ctx.opset < 11) {
    // Resize-10 is what ONNX's version converter turns into asymmetric + floor at opset 11.
    p.transform = Transform::kAsymmetric;
    p.rounding = Rounding::kFloor;
    scales = optional_input(ctx, 1);
    if (!scales) return ctx.error("scales input is missing");
  } else {
    HS_ASSIGN_OR_RETURN(p.transform,
                        pick<Transform>(ctx, "coordinate_transformation_mode", "half_pixel",
                                        {{"half_pixel", Transform::kHalfPixel},
                                         {"asymmetric", Transform::kAsymmetric},
                                         {"align_corners", Transform::kAlignCorners},
                                         {"pytorch_half_pixel", Transform::kPytorchHalfPixel},
                                         {"tf_half_pixel_for_nearest", Transform::kTfHalfPixelForNearest}}));
    HS_ASSIGN_OR_RETURN(p.rounding, pick<Rounding>(ctx, "nearest_mode", "round_prefer_floor",
                                                   {{"round_prefer_floor", Rounding::kRoundPreferFloor},
                                                    {"round_prefer_ceil", Rounding::kRoundPreferCeil},
                                                    {"floor", Rounding::kFloor},
                                                    {"ceil", Rounding::kCeil}}));
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

// ONNX's map from an output coordinate to a (fractional) input coordinate.
double to_input(Transform t, int64_t out_x, double scale, int64_t in_len, int64_t out_len) {
  const double x = static_cast<double>(out_x);
  switch (t) {
    case Transform::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case Transform::kPytorchHalfPixel:
      return out_len > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Transform::kAlignCorners:
      return out_len == 1 ? 0.0 : x * static_cast<double>(in_len - 1) / static_cast<double>(out_len - 1);
    case Transform::kAsymmetric:
      return x / scale;
    case Transform::kTfHalfPixelForNearest:
      return (x + 0.5) / scale;
  }
  return 0.0;
}

int64_t round_to_index(Rounding r, double x) {
  const double f = std::floor(x);
  const double frac = x - f;
  switch (r) {
    case Rounding::kRoundPreferFloor:
      return static_cast<int64_t>(frac <= 0.5 ? f : f + 1.0);
    case Rounding::kRoundPreferCeil:
      return static_cast<int64_t>(frac < 0.5 ? f : f + 1.0);
    case Rounding::kFloor:
      return static_cast<int64_t>(f);
    case Rounding::kCeil:
      return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

// Where one output coordinate reads from: the two neighbours and the weight of the second
// (nearest uses lo only). Out-of-range coordinates clamp to the edge, which is what ONNX's
// edge padding of the neighbours amounts to.
struct Tap {
  int64_t lo = 0, hi = 0;
  float w = 0.f;
};

std::vector<Tap> axis_taps(const ResizeParams& p, double scale, int64_t in_len, int64_t out_len) {
  std::vector<Tap> taps(static_cast<size_t>(out_len));
  for (int64_t o = 0; o < out_len; ++o) {
    const double x = to_input(p.transform, o, scale, in_len, out_len);
    Tap& t = taps[static_cast<size_t>(o)];
    if (!p.linear) {
      t.lo = t.hi = std::clamp<int64_t>(round_to_index(p.rounding, x), 0, in_len - 1);
      continue;
    }
    const double c = std::clamp(x, 0.0, static_cast<double>(in_len - 1));
    t.lo = static_cast<int64_t>(std::floor(c));
    t.hi = std::min(t.lo + 1, in_len - 1);
    t.w = static_cast<float>(c - static_cast<double>(t.lo));
  }
  return taps;
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
  const std::vector<Tap> rows = axis_taps(p, p.scale_h, in_h, out_h);
  const std::vector<Tap> cols = axis_taps(p, p.scale_w, in_w, out_w);

  tbb::parallel_for(int64_t{0}, planes, [&](int64_t plane) {
    const float* src = x.data<float>() + plane * in_h * in_w;
    float* dst = y.data<float>() + plane * out_h * out_w;
    for (const Tap& r : rows) {
      const float* top = src + r.lo * in_w;
      const float* bottom = src + r.hi * in_w;
      for (const Tap& c : cols) {
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
