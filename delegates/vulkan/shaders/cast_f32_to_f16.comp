#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// Cast f32 -> f16 (or bf16, push constant bf16 = 1), one element per invocation: the island's f16 outputs.
// Rounds to nearest even in integer arithmetic (half_bits.glsl), not by the
// device's float conversion, whose rounding mode SPIR-V leaves open; writes
// halves through storageBuffer16BitAccess. Push constants: CastPush in
// delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_bits.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly restrict buffer Dst { uint16_t dst[]; };

// bf16: 0 for f16 elements, 1 for bfloat16 ones.
layout(push_constant) uniform Push { uint count; uint bf16; } pc;

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.count) return;
  dst[i] = uint16_t(pc.bf16 != 0u ? float_bits_to_bfloat16_bits(src[i]) : float_bits_to_half_bits(src[i]));
}
