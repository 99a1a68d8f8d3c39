// VGF cast (TOSA CAST) between f32, i32 and i64 (two 32-bit words, low
// first), one invocation per element: the integer tensors a model casts to
// or from. Converts on the bits in 32-bit integer arithmetic (cast_bits.glsl,
// the same code as the Vulkan delegate's cast), so no shaderInt64 is needed
// and the result is the portable CPU kernel's.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "../../../shared_gpu/shaders/cast_bits.glsl"

layout(std430, set = 0, binding = 0) readonly buffer In { uint x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { uint y[]; };

// from, to: the word kinds of cast_bits.glsl.
layout(push_constant) uniform Params { uint count; uint from; uint to; } p;

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  const bool wide_in = p.from == kCastI64;
  const uint w0 = x[wide_in ? 2u * i : i];
  const uint w1 = wide_in ? x[2u * i + 1u] : 0u;
  const uvec2 v = cast_words(p.from, p.to, w0, w1);
  if (p.to == kCastI64) {
    y[2u * i] = v.x;
    y[2u * i + 1u] = v.y;
  } else {
    y[i] = v.x;
  }
}
