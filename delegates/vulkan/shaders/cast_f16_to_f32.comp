#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// Cast f16 (or bf16, push constant bf16 = 1) -> f32, one element per invocation: the island's f16 inputs (an
// fp16 model's interface) widened for the f32 kernels. Reads halves through
// storageBuffer16BitAccess (the only 16-bit feature it needs) and converts
// their bits in integer arithmetic (half_bits.glsl), so subnormals and NaN
// payloads come out as graph/dtype.h makes them. Push constants: CastPush
// in delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_bits.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer Src { uint16_t src[]; };
layout(set = 0, binding = 1) writeonly restrict buffer Dst { uint dst[]; };

// bf16: 0 for f16 elements, 1 for bfloat16 ones.
layout(push_constant) uniform Push { uint count; uint bf16; } pc;

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= pc.count) return;
  const uint h = uint(src[i]);
  dst[i] = pc.bf16 != 0u ? bfloat16_bits_to_float_bits(h) : half_bits_to_float_bits(h);
}
