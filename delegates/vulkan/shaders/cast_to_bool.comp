#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
// Cast f32, i32 or i64 (the word kind `from`) -> bool, one element per
// invocation: nonzero is true (cast_bits.glsl). Writes bytes through
// storageBuffer8BitAccess. Push constants: CastPush in
// delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/cast_bits.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly restrict buffer Dst { uint8_t dst[]; };

layout(push_constant) uniform Push { uint count; uint from; uint to; } pc;

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.count) return;
  const bool wide_in = pc.from == kCastI64;
  const uint w0 = src[wide_in ? 2u * i : i];
  const uint w1 = wide_in ? src[2u * i + 1u] : 0u;
  dst[i] = uint8_t(cast_word_to_bool(pc.from, w0, w1));
}
