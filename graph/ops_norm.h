// How the normalization ops (ops_norm.cc: LayerNormalization,
// GroupNormalization, MeanVarianceNormalization) read their attributes and parameter shapes. Shape
// inference and the CPU kernels both call these, so the two cannot read one
// node differently. Errors are plain reasons; callers put the node in front.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

// LayerNormalization (opset 17): X is normalised over its dims from `axis`
// on; `outer` rows of `inner` elements each. Scale and the optional B must
// broadcast (right-aligned, one way) to X's dims from `axis` on.
struct LayerNormParams {
  int64_t axis = 0;  // normalised into [0, rank)
  float epsilon = 1e-5f;
  int64_t outer = 1;
  int64_t inner = 1;
};
// `scale` and `bias` are the shapes of inputs 1 and 2 (`bias` nullptr when omitted).
Result<LayerNormParams> layer_norm_params(const Attributes& attrs, const Shape& x, const Shape& scale,
                                          const Shape* bias);
// The shape of the optional Mean and InvStdDev outputs: X's, with 1 from `axis` on.
Shape layer_norm_stat_shape(const Shape& x, int64_t axis);

// GroupNormalization over X (N, C, spatial...): C channels in `groups`
// groups, each normalised over its channels and spatial dims. Scale and
// bias are per group at opset 18 and per channel from opset 21 (the ONNX
// revision); `per_channel` says which the graph's opset means.
struct GroupNormParams {
  int64_t groups = 1;
  float epsilon = 1e-5f;
  bool per_channel = true;
};
Result<GroupNormParams> group_norm_params(const Attributes& attrs, int opset, const Shape& x, const Shape& scale,
                                          const Shape& bias);

// Both ops' stash_type (the precision of the statistics): 1 (float) is
// accepted, hetsched computing them in double and storing f32; anything
// else is an unsupported error naming it.
Status check_stash_type(const Attributes& attrs);

// MeanVarianceNormalization (opset 9, 13): the axes X is normalised over
// (attribute `axes`, default [0, 2, 3]), made non-negative, sorted, each
// once. Y = (X - mean) / (sqrt(E[X^2] - mean^2) + 1e-9), ONNX's function.
Result<std::vector<int64_t>> mvn_axes(const Attributes& attrs, int64_t rank);
inline constexpr double kMvnEpsilon = 1e-9;

}  // namespace hetsched
