#include "graph/grid_sample.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace hetsched {

Result<GridSampleParams> grid_sample_params(const Attributes& attrs, int opset) {
  GridSampleParams p;
  const bool new_names = opset >= 20;
  HS_ASSIGN_OR_RETURN(const std::string mode, attrs.get_string("mode", new_names ? "linear" : "bilinear"));
  if (mode == (new_names ? "linear" : "bilinear")) {
    p.mode = GridSampleMode::kLinear;
  } else if (mode == "nearest") {
    p.mode = GridSampleMode::kNearest;
  } else if (mode == (new_names ? "cubic" : "bicubic")) {
    p.mode = GridSampleMode::kCubic;
  } else {
    return invalid_argument("attribute 'mode' = '" + mode + "' is not a mode of opset " + std::to_string(opset) +
                            (new_names ? " (accepted: linear, nearest, cubic)" : " (accepted: bilinear, nearest, bicubic)"));
  }
  HS_ASSIGN_OR_RETURN(const std::string padding, attrs.get_string("padding_mode", "zeros"));
  if (padding == "zeros") {
    p.padding = GridSamplePadding::kZeros;
  } else if (padding == "border") {
    p.padding = GridSamplePadding::kBorder;
  } else if (padding == "reflection") {
    p.padding = GridSamplePadding::kReflection;
  } else {
    return invalid_argument("attribute 'padding_mode' = '" + padding +
                            "' is not supported (accepted: zeros, border, reflection)");
  }
  HS_ASSIGN_OR_RETURN(const int64_t align, attrs.get_int("align_corners", 0));
  if (align != 0 && align != 1)
    return invalid_argument("attribute 'align_corners' must be 0 or 1, got " + std::to_string(align));
  p.align_corners = align == 1;
  return p;
}

Result<Shape> grid_sample_output_shape(const Shape& x, const Shape& grid) {
  if (x.size() != 4 || grid.size() != 4)
    return unsupported("GridSample over " + std::to_string(x.size() < 2 ? 0 : x.size() - 2) +
                       " spatial dims (X " + shape_to_string(x) + ", grid " + shape_to_string(grid) +
                       ") is not supported (accepted: 2, X [N, C, H, W] and grid [N, H_out, W_out, 2])");
  if (grid[3] != 2 || grid[0] != x[0])
    return invalid_argument("grid " + shape_to_string(grid) + " must be [N, H_out, W_out, 2] with X's N = " +
                            std::to_string(x[0]));
  return Shape{x[0], x[1], grid[1], grid[2]};
}

double grid_sample_denormalize(double n, int64_t length, bool align_corners) {
  const double d = static_cast<double>(length);
  return align_corners ? (n + 1.0) / 2.0 * (d - 1.0) : ((n + 1.0) * d - 1.0) / 2.0;
}

GridSampleBorder grid_sample_border(int64_t length, bool align_corners) {
  const double d = static_cast<double>(length);
  return align_corners ? GridSampleBorder{0.0, d - 1.0} : GridSampleBorder{-0.5, d - 0.5};
}

double grid_sample_reflect(double x, GridSampleBorder b) {
  const double range = b.hi - b.lo;
  if (!(range > 0.0)) return b.lo;  // one pixel with align_corners: every point is it
  if (x < b.lo) {
    const double dx = b.lo - x;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0.0 ? b.lo + r : b.hi - r;
  }
  if (x > b.hi) {
    const double dx = x - b.hi;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0.0 ? b.hi - r : b.lo + r;
  }
  return x;
}

double grid_sample_fold(double x, int64_t length, GridSamplePadding padding, GridSampleBorder border) {
  if (x >= border.lo && x <= border.hi) return x;
  if (padding == GridSamplePadding::kBorder) return std::clamp(x, 0.0, static_cast<double>(length - 1));
  if (padding == GridSamplePadding::kReflection) return grid_sample_reflect(x, border);
  return x;
}

int64_t grid_sample_index(int64_t i, int64_t length, GridSamplePadding padding, GridSampleBorder border) {
  switch (padding) {
    case GridSamplePadding::kZeros:
      return i >= 0 && i < length ? i : -1;
    case GridSamplePadding::kBorder:
      return std::clamp<int64_t>(i, 0, length - 1);
    case GridSamplePadding::kReflection:
      // Truncated toward zero as the reference's int(); a reflected index
      // lies in [lo, hi], so it stays on the input.
      return std::clamp<int64_t>(static_cast<int64_t>(grid_sample_reflect(static_cast<double>(i), border)), 0,
                                 length - 1);
  }
  return -1;
}

}  // namespace hetsched
