// VGF cast (TOSA CAST) f32 -> f16 (or bf16, push constant bf16 = 1), one invocation per element: an fp16
// model's f16 outputs. Rounds to nearest even on the bits (half_bits.glsl),
// not by the device's float conversion, whose rounding mode SPIR-V leaves
// open; writes halves through storageBuffer16BitAccess.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;

#include "../../../shared_gpu/shaders/half_bits.glsl"

layout(std430, set = 0, binding = 0) readonly buffer In { uint x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint16_t y[]; };

// bf16: 0 for f16 elements, 1 for bfloat16 ones.
layout(push_constant) uniform Params { uint count; uint bf16; } p;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  y[i] = uint16_t(p.bf16 != 0u ? float_bits_to_bfloat16_bits(x[i]) : float_bits_to_half_bits(x[i]));
}
