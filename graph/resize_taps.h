// Resize's coordinate mapping (ONNX semantics), shared by every engine so
// they all read the same source pixels with the same weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

enum class ResizeTransform {
  kHalfPixel,
  kAsymmetric,
  kAlignCorners,
  kPytorchHalfPixel,
  kTfHalfPixelForNearest,
  kHalfPixelSymmetric,  // opset 19
};
enum class ResizeRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

// Where one output coordinate reads: two neighbours and the weight of the
// second (nearest mode uses lo only). Out-of-range coordinates clamp to the
// edge, which is what ONNX's edge padding of the neighbours amounts to.
struct ResizeTap {
  int64_t lo = 0, hi = 0;
  float w = 0.f;
};

// The transformation or rounding ONNX names so (coordinate_transformation_mode,
// nearest_mode); nullopt for any other name (tf_crop_and_resize among them).
std::optional<ResizeTransform> resize_transform_named(std::string_view name);
std::optional<ResizeRounding> resize_rounding_named(std::string_view name);

// ONNX's map from an output coordinate to a fractional input coordinate.
// `resized_len` is ONNX's length_resized, input length × scale, NOT rounded:
// with scales it differs from the output length (4 × 0.6 = 2.4 vs 2), and
// align_corners / pytorch_half_pixel divide by it (the ONNX node test
// test_resize_downsample_scales_linear_align_corners). Given sizes,
// scale = out / in, so it is the output length. half_pixel_symmetric
// also reads the output length `out_len` (floor(resized_len)): it centres
// the sampled region where the rounding trims the output.
double resize_source_coordinate(ResizeTransform t, int64_t out_x, double scale, int64_t in_len, double resized_len,
                                int64_t out_len);
int64_t resize_round(ResizeRounding r, double x);
// The taps of every output coordinate along one axis.
std::vector<ResizeTap> resize_axis_taps(bool linear, ResizeTransform t, ResizeRounding r, double scale, int64_t in_len,
                                        int64_t out_len);

// Cubic mode's taps of one output coordinate: the four input pixels around
// its source coordinate (clamped to the edge, ONNX's edge padding) and
// their weights, Keys' cubic convolution with coefficient `a`
// (cubic_coeff_a, -0.75 by default). With exclude_outside, taps off the
// input weigh 0 and the rest are scaled to sum to 1.
struct ResizeCubicTap {
  int64_t index[4] = {};
  float w[4] = {};
};
std::vector<ResizeCubicTap> resize_axis_cubic_taps(ResizeTransform t, double scale, int64_t in_len, int64_t out_len,
                                                   double a, bool exclude_outside);

// A Resize's scale and output length on every dim of X, from `scales` (f32)
// or `sizes` (i64), one value per dim or, at opset 18 with attribute
// `axes`, one per named axis (the others keep scale 1). Output lengths are
// floor(length x scale); given sizes, the scale is output / input length.
// keep_aspect_ratio_policy other than stretch is not applied here (shape
// inference refuses it with sizes). Errors are plain reasons.
struct ResizeDims {
  std::vector<double> scales;
  Shape out;
};
Result<ResizeDims> resize_dims(const Attributes& attrs, int opset, const Shape& x, const Tensor* scales,
                               const Tensor* sizes);

// A Resize node's mode and its mapping on H and W, read from the graph for
// the kernels that plan it ahead (the CPU delegate's NHWC nearest kernel
// and its fast NCHW one, XNNPACK's, the GPU delegates'): a static rank-4
// f32 input and output of the same N and C, mode "nearest" or "linear" (not
// cubic, no `axes` leaving dims out), any coordinate_transformation_mode
// but tf_crop_and_resize, and
// the scales a constant (Resize-10's input 1, else input 2) or, absent or
// empty, the output size over the input's. Resize-10 is asymmetric with
// floor, as ONNX's version converter turns it at opset 11.
struct ResizeMapping {
  bool linear = false;
  ResizeTransform transform = ResizeTransform::kHalfPixel;
  ResizeRounding rounding = ResizeRounding::kRoundPreferFloor;
  double scale_h = 1.0, scale_w = 1.0;
};
// `half_ok`: f16 and bf16 tensors too (the Vulkan delegate's half storage
// rewrites an island's tensor types; its kernels convert on load and store).
Result<ResizeMapping> read_resize_mapping(const Graph& graph, const Node& node, bool half_ok = false);

}  // namespace hetsched
