#version 450
#extension GL_GOOGLE_include_directive : require
// Pad (every mode) as a gather: each output coordinate reads the input
// offset that the per-dim tables give (the input index times the dim's
// stride, made on the host), or the fill where a table says -1. Layout of
// the parameter block: PadParams in delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer Params { uint params[]; };
layout(set = 0, binding = 1) readonly restrict buffer Src { float src[]; };
HALF_IN(1, SrcH, src)
layout(set = 0, binding = 2) readonly restrict buffer Table { int table[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Dst { float dst[]; };
HALF_OUT(3, DstH, dst)

layout(push_constant) uniform Push { uint base; } pc;

const uint kTotal = 0u;
const uint kRank = 1u;
const uint kFill = 2u;
const uint kDims = 8u;
const uint kTableStart = 16u;

void main() {
  const uint base = pc.base;
  const uint idx = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (idx >= params[base + kTotal]) return;
  int offset = 0;
  bool fill = false;
  uint rest = idx;
  for (uint d = params[base + kRank]; d-- > 0u;) {
    const uint dim = params[base + kDims + d];
    const int s = table[params[base + kTableStart + d] + rest % dim];
    rest /= dim;
    fill = fill || s < 0;
    offset += s;
  }
  STORE(3, dst, idx, fill ? uintBitsToFloat(params[base + kFill]) : LOAD(1, src, offset));
}
