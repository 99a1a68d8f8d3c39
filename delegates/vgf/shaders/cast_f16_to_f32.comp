// VGF cast (TOSA CAST) f16 (or bf16, push constant bf16 = 1) -> f32, one invocation per element: an fp16
// model's f16 inputs widened for the f32 operators. Halves are read through
// storageBuffer16BitAccess and widened on their bits (half_bits.glsl, the
// same code as the Vulkan delegate's cast), so subnormals and NaN payloads
// come out as graph/dtype.h makes them.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;

#include "../../../shared_gpu/shaders/half_bits.glsl"

layout(std430, set = 0, binding = 0) readonly buffer In { uint16_t x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint y[]; };

// bf16: 0 for f16 elements, 1 for bfloat16 ones.
layout(push_constant) uniform Params { uint count; uint bf16; } p;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  const uint h = uint(x[i]);
  y[i] = p.bf16 != 0u ? bfloat16_bits_to_float_bits(h) : half_bits_to_float_bits(h);
}
