#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
// Cast bool -> f32, i32 or i64 (the word kind `to`), one element per
// invocation: the byte's value, as the CPU kernel reads a bool (0 or 1 in
// any valid tensor). Reads bytes through storageBuffer8BitAccess. Push
// constants: CastPush in delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/cast_bits.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer Src { uint8_t src[]; };
layout(set = 0, binding = 1) writeonly restrict buffer Dst { uint dst[]; };

layout(push_constant) uniform Push { uint count; uint from; uint to; } pc;

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.count) return;
  const uvec2 y = cast_words(kCastI32, pc.to, uint(src[i]), 0u);
  if (pc.to == kCastI64) {
    dst[2u * i] = y.x;
    dst[2u * i + 1u] = y.y;
  } else {
    dst[i] = y.x;
  }
}
