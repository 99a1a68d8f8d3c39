#include "graph/resize_taps.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace hetsched {

std::optional<ResizeTransform> resize_transform_named(std::string_view name) {
  if (name == "half_pixel") return ResizeTransform::kHalfPixel;
  if (name == "asymmetric") return ResizeTransform::kAsymmetric;
  if (name == "align_corners") return ResizeTransform::kAlignCorners;
  if (name == "pytorch_half_pixel") return ResizeTransform::kPytorchHalfPixel;
  if (name == "tf_half_pixel_for_nearest") return ResizeTransform::kTfHalfPixelForNearest;
  if (name == "half_pixel_symmetric") return ResizeTransform::kHalfPixelSymmetric;
  return std::nullopt;
}

std::optional<ResizeRounding> resize_rounding_named(std::string_view name) {
  if (name == "round_prefer_floor") return ResizeRounding::kRoundPreferFloor;
  if (name == "round_prefer_ceil") return ResizeRounding::kRoundPreferCeil;
  if (name == "floor") return ResizeRounding::kFloor;
  if (name == "ceil") return ResizeRounding::kCeil;
  return std::nullopt;
}

double resize_source_coordinate(ResizeTransform t, int64_t out_x, double scale, int64_t in_len, double resized_len,
                                int64_t out_len) {
  const double x = static_cast<double>(out_x);
  switch (t) {
    case ResizeTransform::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case ResizeTransform::kPytorchHalfPixel:
      return resized_len > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case ResizeTransform::kAlignCorners:
      return resized_len == 1 ? 0.0 : x * static_cast<double>(in_len - 1) / (resized_len - 1);
    case ResizeTransform::kAsymmetric:
      return x / scale;
    case ResizeTransform::kTfHalfPixelForNearest:
      return (x + 0.5) / scale;
    case ResizeTransform::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out_len) / resized_len;
      const double offset = static_cast<double>(in_len) / 2.0 * (1.0 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
  }
  return 0.0;
}

int64_t resize_round(ResizeRounding r, double x) {
  const double f = std::floor(x);
  const double frac = x - f;
  switch (r) {
    case ResizeRounding::kRoundPreferFloor:
      return static_cast<int64_t>(frac <= 0.5 ? f : f + 1.0);
    case ResizeRounding::kRoundPreferCeil:
      return static_cast<int64_t>(frac < 0.5 ? f : f + 1.0);
    case ResizeRounding::kFloor:
      return static_cast<int64_t>(f);
    case ResizeRounding::kCeil:
      return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

std::vector<ResizeTap> resize_axis_taps(bool linear, ResizeTransform t, ResizeRounding r, double scale, int64_t in_len,
                                        int64_t out_len) {
  std::vector<ResizeTap> taps(static_cast<size_t>(out_len));
  const double resized_len = static_cast<double>(in_len) * scale;
  for (int64_t o = 0; o < out_len; ++o) {
    const double x = resize_source_coordinate(t, o, scale, in_len, resized_len, out_len);
    ResizeTap& tap = taps[static_cast<size_t>(o)];
    if (!linear) {
      tap.lo = tap.hi = std::clamp<int64_t>(resize_round(r, x), 0, in_len - 1);
      continue;
    }
    const double c = std::clamp(x, 0.0, static_cast<double>(in_len - 1));
    tap.lo = static_cast<int64_t>(std::floor(c));
    tap.hi = std::min(tap.lo + 1, in_len - 1);
    tap.w = static_cast<float>(c - static_cast<double>(tap.lo));
  }
  return taps;
}

namespace {

// Keys' kernel at distance s (|s| < 2), ONNX's cubic coefficients.
double cubic_weight(double s, double a) {
  s = std::abs(s);
  if (s <= 1.0) return ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0;
  if (s < 2.0) return ((a * s - 5.0 * a) * s + 8.0 * a) * s - 4.0 * a;
  return 0.0;
}

}  // namespace

std::vector<ResizeCubicTap> resize_axis_cubic_taps(ResizeTransform t, double scale, int64_t in_len, int64_t out_len,
                                                   double a, bool exclude_outside) {
  std::vector<ResizeCubicTap> taps(static_cast<size_t>(out_len));
  const double resized_len = static_cast<double>(in_len) * scale;
  for (int64_t o = 0; o < out_len; ++o) {
    const double x = resize_source_coordinate(t, o, scale, in_len, resized_len, out_len);
    const double f = std::floor(x);
    ResizeCubicTap& tap = taps[static_cast<size_t>(o)];
    double w[4], sum = 0.0;
    for (int k = 0; k < 4; ++k) {
      const int64_t i = static_cast<int64_t>(f) - 1 + k;
      w[k] = cubic_weight(x - static_cast<double>(i), a);
      if (exclude_outside && (i < 0 || i >= in_len)) w[k] = 0.0;
      sum += w[k];
      tap.index[k] = std::clamp<int64_t>(i, 0, in_len - 1);
    }
    for (int k = 0; k < 4; ++k) tap.w[k] = static_cast<float>(exclude_outside && sum != 0.0 ? w[k] / sum : w[k]);
  }
  return taps;
}

Result<ResizeDims> resize_dims(const Attributes& attrs, int opset, const Shape& x, const Tensor* scales,
                               const Tensor* sizes) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) axes[static_cast<size_t>(d)] = d;
  if (opset >= 18 && attrs.has("axes")) {
    HS_ASSIGN_OR_RETURN(const std::vector<int64_t> given, attrs.get_ints("axes", {}));
    axes.clear();
    for (const int64_t a : given) {
      const int64_t d = a < 0 ? a + rank : a;
      if (d < 0 || d >= rank || std::find(axes.begin(), axes.end(), d) != axes.end())
        return invalid_argument("attribute 'axes' names axis " + std::to_string(a) +
                                " out of range or twice, for an input of rank " + std::to_string(rank));
      axes.push_back(d);
    }
  }
  const std::string per = axes.size() == static_cast<size_t>(rank) ? "dim of X " + shape_to_string(x)
                                                                   : "entry of attribute 'axes'";
  ResizeDims dims{std::vector<double>(static_cast<size_t>(rank), 1.0), x};
  if (scales) {
    if (scales->dtype() != DType::kFloat32 || scales->num_elements() != static_cast<int64_t>(axes.size()))
      return invalid_argument("scales must be " + std::to_string(axes.size()) + " f32 values (one per " + per +
                              "), got " + scales->type().to_string());
    for (size_t i = 0; i < axes.size(); ++i) {
      const double s = scales->data<float>()[i];
      const size_t d = static_cast<size_t>(axes[i]);
      if (!(s > 0.0)) return invalid_argument("scale " + std::to_string(s) + " of dim " + std::to_string(d) + " is not positive");
      dims.scales[d] = s;
      // ONNX: floor(length x scale), in double as the ONNX reference computes it.
      const double length = std::floor(static_cast<double>(x[d]) * s);
      if (!(length < 0x1p62)) return invalid_argument("scale " + std::to_string(s) + " of dim " + std::to_string(d) + " is too large");
      dims.out[d] = static_cast<int64_t>(length);
    }
  } else if (sizes) {
    if (sizes->dtype() != DType::kInt64 || sizes->num_elements() != static_cast<int64_t>(axes.size()))
      return invalid_argument("sizes must be " + std::to_string(axes.size()) + " i64 values (one per " + per +
                              "), got " + sizes->type().to_string());
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t d = static_cast<size_t>(axes[i]);
      dims.out[d] = sizes->data<int64_t>()[i];
      if (x[d] > 0) dims.scales[d] = static_cast<double>(dims.out[d]) / static_cast<double>(x[d]);
    }
  } else {
    return invalid_argument("needs one of scales or sizes, got neither");
  }
  for (size_t d = 0; d < dims.out.size(); ++d)
    if (dims.out[d] <= 0 && x[d] > 0)
      return invalid_argument("resizes dim " + std::to_string(d) + " of " + shape_to_string(x) + " to " +
                              std::to_string(dims.out[d]));
  return dims;
}

namespace {

bool static_rank4(const Graph& graph, ValueId v, bool half_ok) {
  const Value& value = graph.value(v);
  const DType d = value.type.dtype;
  return value.type_known && value.type.is_static() && value.type.rank() == 4 &&
         (d == DType::kFloat32 || (half_ok && is_half_float(d)));
}

}  // namespace

Result<ResizeMapping> read_resize_mapping(const Graph& graph, const Node& node, bool half_ok) {
  if (node.op != "Resize" || node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.size() != 1)
    return unsupported("not a Resize of one input and one output");
  ResizeMapping m;
  HS_ASSIGN_OR_RETURN(const std::string mode, node.attrs.get_string("mode", "nearest"));
  if (mode != "nearest" && mode != "linear") return unsupported("mode '" + mode + "' (nearest and linear are)");
  m.linear = mode == "linear";
  // antialias needs no look: shape inference lets it through only where it
  // changes nothing (nearest mode, or no dim shrinking).
  if (graph.opset() >= 18 && node.attrs.has("axes")) {
    HS_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, node.attrs.get_ints("axes", {}));
    if (axes != std::vector<int64_t>{0, 1, 2, 3} && axes != std::vector<int64_t>{-4, -3, -2, -1})
      return unsupported("Resize over some axes (attribute 'axes'; the portable kernel runs it)");
  }
  const ValueId x = node.inputs[0], y = node.outputs[0];
  if (!static_rank4(graph, x, half_ok) || !static_rank4(graph, y, half_ok))
    return unsupported(half_ok ? "not a static rank-4 float tensor" : "not a static rank-4 f32 tensor");
  const Shape& xs = graph.value(x).type.shape;
  const Shape& ys = graph.value(y).type.shape;
  if (xs[0] != ys[0] || xs[1] != ys[1]) return unsupported("N or C resized (only H and W are)");
  if (xs[2] == 0 || xs[3] == 0) return unsupported("an empty input");
  size_t scales_input = 2;
  if (graph.opset() < 11) {
    m.transform = ResizeTransform::kAsymmetric;
    m.rounding = ResizeRounding::kFloor;
    scales_input = 1;
  } else {
    HS_ASSIGN_OR_RETURN(const std::string transform,
                        node.attrs.get_string("coordinate_transformation_mode", "half_pixel"));
    HS_ASSIGN_OR_RETURN(const std::string rounding, node.attrs.get_string("nearest_mode", "round_prefer_floor"));
    const std::optional<ResizeTransform> t = resize_transform_named(transform);
    if (!t) return unsupported("coordinate_transformation_mode '" + transform + "'");
    const std::optional<ResizeRounding> r = resize_rounding_named(rounding);
    if (!r) return unsupported("nearest_mode '" + rounding + "'");
    m.transform = *t;
    m.rounding = *r;
  }
  const Value* scales = node.inputs.size() > scales_input && node.inputs[scales_input] != kNoValue
                            ? &graph.value(node.inputs[scales_input])
                            : nullptr;
  if (scales && scales->is_constant() && scales->constant->num_elements() == 0) scales = nullptr;
  if (scales) {
    if (!scales->is_constant()) return unsupported("scales computed at run time");
    if (scales->constant->dtype() != DType::kFloat32 || scales->constant->num_elements() != 4)
      return unsupported("scales that are not 4 f32 values");
    m.scale_h = scales->constant->data<float>()[2];
    m.scale_w = scales->constant->data<float>()[3];
  } else {
    m.scale_h = static_cast<double>(ys[2]) / static_cast<double>(xs[2]);
    m.scale_w = static_cast<double>(ys[3]) / static_cast<double>(xs[3]);
  }
  if (!(m.scale_h > 0.0) || !(m.scale_w > 0.0)) return unsupported("scales that are not positive");
  return m;
}

}  // namespace hetsched
