#include "graph/resize_taps.h"

#include <algorithm>
#include <cmath>

namespace hetsched {

double resize_source_coordinate(ResizeTransform t, int64_t out_x, double scale, int64_t in_len, double resized_len) {
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
    const double x = resize_source_coordinate(t, o, scale, in_len, resized_len);
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

}  // namespace hetsched
