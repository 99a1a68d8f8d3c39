// How RoiAlign (opset 10; coordinate_transformation_mode at 16) reads its
// attributes and inputs. Shape inference and the CPU kernel share these.
#pragma once

#include <cstdint>

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

struct RoiAlignParams {
  bool max_mode = false;          // mode "max" (else "avg")
  int64_t output_height = 1, output_width = 1;
  int64_t sampling_ratio = 0;     // samples per bin side; 0: ceil(roi size / output size)
  float spatial_scale = 1.f;      // rois are in input pixels times 1 / scale
  bool half_pixel = false;        // shift rois by -0.5 pixel, no minimum size of 1
};

// The attributes in the node's opset: opset 16's default transformation
// is half_pixel; before 16 it was output_half_pixel (no shift, rois at
// least 1 x 1).
Result<RoiAlignParams> roi_align_params(const Attributes& attrs, int opset);

// X [N, C, H, W] f32, rois [R, 4] f32 (x1, y1, x2, y2), batch_indices [R]
// i64: the output shape [R, C, output_height, output_width].
Result<Shape> roi_align_output_shape(const RoiAlignParams& p, const TensorType& x, const TensorType& rois,
                                     const TensorType& batch_indices);

}  // namespace hetsched
