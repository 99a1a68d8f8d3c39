#version 450
#extension GL_GOOGLE_include_directive : require
// Cast between element types stored as 32-bit words: f32, i32 and i64 (two
// words, low first), one element per invocation. No device feature needed:
// 64-bit integers are handled as word pairs (cast_bits.glsl). Push
// constants: CastPush in delegates/vulkan/kernel_params.h (from, to: the
// word kinds of cast_bits.glsl).
#include "common.glsl"
#include "../../../shared_gpu/shaders/cast_bits.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly restrict buffer Dst { uint dst[]; };

layout(push_constant) uniform Push { uint count; uint from; uint to; } pc;

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.count) return;
  const bool wide_in = pc.from == kCastI64;
  const uint w0 = src[wide_in ? 2u * i : i];
  const uint w1 = wide_in ? src[2u * i + 1u] : 0u;
  const uvec2 y = cast_words(pc.from, pc.to, w0, w1);
  if (pc.to == kCastI64) {
    dst[2u * i] = y.x;
    dst[2u * i + 1u] = y.y;
  } else {
    dst[i] = y.x;
  }
}
