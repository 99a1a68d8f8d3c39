#include "graph/roi_align.h"

#include <string>

namespace hetsched {

Result<RoiAlignParams> roi_align_params(const Attributes& attrs, int opset) {
  RoiAlignParams p;
  HS_ASSIGN_OR_RETURN(const std::string mode, attrs.get_string("mode", "avg"));
  if (mode != "avg" && mode != "max")
    return invalid_argument("attribute 'mode' = '" + mode + "' is not supported (accepted: avg, max)");
  p.max_mode = mode == "max";
  HS_ASSIGN_OR_RETURN(p.output_height, attrs.get_int("output_height", 1));
  HS_ASSIGN_OR_RETURN(p.output_width, attrs.get_int("output_width", 1));
  HS_ASSIGN_OR_RETURN(p.sampling_ratio, attrs.get_int("sampling_ratio", 0));
  HS_ASSIGN_OR_RETURN(p.spatial_scale, attrs.get_float("spatial_scale", 1.f));
  if (p.output_height < 1 || p.output_width < 1 || p.sampling_ratio < 0 || !(p.spatial_scale > 0.f))
    return invalid_argument("attributes output_height " + std::to_string(p.output_height) + ", output_width " +
                            std::to_string(p.output_width) + ", sampling_ratio " + std::to_string(p.sampling_ratio) +
                            ", spatial_scale " + std::to_string(p.spatial_scale) +
                            " are not accepted (sizes >= 1, sampling_ratio >= 0, spatial_scale > 0)");
  HS_ASSIGN_OR_RETURN(const std::string transform, attrs.get_string("coordinate_transformation_mode",
                                                                    opset >= 16 ? "half_pixel" : "output_half_pixel"));
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return invalid_argument("attribute 'coordinate_transformation_mode' = '" + transform +
                            "' is not supported (accepted: half_pixel, output_half_pixel)");
  p.half_pixel = transform == "half_pixel";
  return p;
}

Result<Shape> roi_align_output_shape(const RoiAlignParams& p, const TensorType& x, const TensorType& rois,
                                     const TensorType& batch_indices) {
  if (x.dtype != DType::kFloat32 || x.rank() != 4)
    return invalid_argument("input X must be f32 [N, C, H, W], got " + x.to_string());
  if (rois.dtype != DType::kFloat32 || rois.rank() != 2 || rois.shape[1] != 4)
    return invalid_argument("input rois must be f32 [num_rois, 4] (x1, y1, x2, y2), got " + rois.to_string());
  if (batch_indices.dtype != DType::kInt64 || batch_indices.shape != Shape{rois.shape[0]})
    return invalid_argument("input batch_indices must be i64[" + std::to_string(rois.shape[0]) +
                            "] (one per roi), got " + batch_indices.to_string());
  return Shape{rois.shape[0], x.shape[1], p.output_height, p.output_width};
}

}  // namespace hetsched
