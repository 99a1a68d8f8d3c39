#version 450
#extension GL_GOOGLE_include_directive : require
// The movement kernel of Transpose, Slice and Concat: for every coordinate
// of an iteration shape, dst[dst_offset + coord . dst_strides] =
// src[src_offset + coord . src_strides]. Negative strides walk backwards
// (Slice with negative steps). Layout of the parameter block: CopyParams
// in delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer Params { uint params[]; };
layout(set = 0, binding = 1) readonly restrict buffer Src { float src[]; };
HALF_IN(1, SrcH, src)
layout(set = 0, binding = 2) writeonly restrict buffer Dst { float dst[]; };
HALF_OUT(2, DstH, dst)

layout(push_constant) uniform Push { uint base; } pc;

const uint kTotal = 0u;
const uint kRank = 1u;
const uint kSrcOffset = 2u;
const uint kDstOffset = 3u;
const uint kDims = 8u;
const uint kSrcStrides = 16u;
const uint kDstStrides = 24u;

void main() {
  const uint base = pc.base;
  const uint idx = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (idx >= params[base + kTotal]) return;
  int s = int(params[base + kSrcOffset]);
  int d = int(params[base + kDstOffset]);
  uint rest = idx;
  for (uint k = params[base + kRank]; k-- > 0u;) {
    const uint dim = params[base + kDims + k];
    const int c = int(rest % dim);
    rest /= dim;
    s += c * int(params[base + kSrcStrides + k]);
    d += c * int(params[base + kDstStrides + k]);
  }
  STORE(2, dst, d, LOAD(1, src, s));
}
