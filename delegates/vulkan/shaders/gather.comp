#version 450
#extension GL_GOOGLE_include_directive : require
// Gather and GatherElements: for every output coordinate, out[i] =
// data[coord . data_strides + indices[coord . index_strides] * axis_stride].
// Gather leaves the index dims out of data_strides; GatherElements leaves
// the axis out. Indices are int32, range-checked and made non-negative on
// the host. Layout of the parameter block: GatherParams in
// delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer Params { uint params[]; };
layout(set = 0, binding = 1) readonly restrict buffer Data { float data[]; };
HALF_IN(1, DataH, data)
layout(set = 0, binding = 2) readonly restrict buffer Indices { int indices[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Out { float out_data[]; };
HALF_OUT(3, OutdataH, out_data)

layout(push_constant) uniform Push { uint base; } pc;

const uint kTotal = 0u;
const uint kRank = 1u;
const uint kAxisStride = 2u;
const uint kDims = 8u;
const uint kDataStrides = 16u;
const uint kIndexStrides = 24u;

void main() {
  const uint base = pc.base;
  const uint idx = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (idx >= params[base + kTotal]) return;
  uint src = 0u;
  uint at = 0u;
  uint rest = idx;
  for (uint k = params[base + kRank]; k-- > 0u;) {
    const uint dim = params[base + kDims + k];
    const uint c = rest % dim;
    rest /= dim;
    src += c * params[base + kDataStrides + k];
    at += c * params[base + kIndexStrides + k];
  }
  src += uint(indices[at]) * params[base + kAxisStride];
  STORE(3, out_data, idx, LOAD(1, data, src));
}
