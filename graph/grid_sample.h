// How GridSample (opset 16; modes renamed and N-D at 20) reads its
// attributes and maps a grid point to input pixels. Shape inference and the
// CPU kernel share these, so the two never read a node differently.
//
// The mapping follows the ONNX reference (and ONNX Runtime, which copies
// it, and PyTorch's grid_sample before it): a normalised coordinate in
// [-1, 1] becomes a pixel coordinate (align_corners: -1 and 1 are the
// centres of the first and last pixels; otherwise their outer edges); one
// outside the border [lo, hi] is clamped (border) or reflected (reflection)
// into it; then every tap the interpolation reads maps its index the same
// way, and with zeros padding an index off the input reads 0.
#pragma once

#include <cstdint>

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

enum class GridSampleMode { kLinear, kNearest, kCubic };
enum class GridSamplePadding { kZeros, kBorder, kReflection };

struct GridSampleParams {
  GridSampleMode mode = GridSampleMode::kLinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
};

// The attributes, in the names of the node's opset: bilinear / nearest /
// bicubic before 20, linear / nearest / cubic from 20.
Result<GridSampleParams> grid_sample_params(const Attributes& attrs, int opset);

// The checks both sides make on X [N, C, H, W] and grid [N, H_out, W_out,
// 2]: 2 spatial dims only (opset 20's volumetric and 1-D forms are refused
// by name). Returns the output shape [N, C, H_out, W_out].
Result<Shape> grid_sample_output_shape(const Shape& x, const Shape& grid);

// Pixel coordinate of normalised coordinate `n` along a dim of `length`.
double grid_sample_denormalize(double n, int64_t length, bool align_corners);

// The border [lo, hi] of a dim: [0, length - 1] with align_corners, else
// [-0.5, length - 0.5].
struct GridSampleBorder {
  double lo, hi;
};
GridSampleBorder grid_sample_border(int64_t length, bool align_corners);

// Reflects x into [lo, hi] off the nearer border until it lands inside.
double grid_sample_reflect(double x, GridSampleBorder border);

// The coordinate interpolation starts from: clamped (border) or reflected
// (reflection) where it lies outside the border; unchanged otherwise.
double grid_sample_fold(double x, int64_t length, GridSamplePadding padding, GridSampleBorder border);

// The index a tap at integer position i reads, or -1 for a zero (zeros
// padding, off the input).
int64_t grid_sample_index(int64_t i, int64_t length, GridSamplePadding padding, GridSampleBorder border);

}  // namespace hetsched
