// VGF cast (TOSA CAST) f32, i32 or i64 -> bool, one invocation per element:
// nonzero is true (cast_bits.glsl). Bytes are written through
// storageBuffer8BitAccess.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 64) in;

#include "../../../shared_gpu/shaders/cast_bits.glsl"

layout(std430, set = 0, binding = 0) readonly buffer In { uint x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint8_t y[]; };

// from: the word kind of cast_bits.glsl; to: unused.
layout(push_constant) uniform Params { uint count; uint from; uint to; } p;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  const bool wide_in = p.from == kCastI64;
  const uint w0 = x[wide_in ? 2u * i : i];
  const uint w1 = wide_in ? x[2u * i + 1u] : 0u;
  y[i] = uint8_t(cast_word_to_bool(p.from, w0, w1));
}
