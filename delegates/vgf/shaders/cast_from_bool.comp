// VGF cast (TOSA CAST) bool -> f32, i32 or i64, one invocation per element:
// the byte's value (0 or 1 in any valid tensor), as the CPU kernel reads a
// bool. Bytes are read through storageBuffer8BitAccess.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 64) in;

#include "../../../shared_gpu/shaders/cast_bits.glsl"

layout(std430, set = 0, binding = 0) readonly buffer In { uint8_t x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint y[]; };

// to: the word kind of cast_bits.glsl; from: unused.
layout(push_constant) uniform Params { uint count; uint from; uint to; } p;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  const uvec2 v = cast_words(kCastI32, p.to, uint(x[i]), 0u);
  if (p.to == kCastI64) {
    y[2u * i] = v.x;
    y[2u * i + 1u] = v.y;
  } else {
    y[i] = v.x;
  }
}
