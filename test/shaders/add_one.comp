#version 450
// Test shader for the shared GPU helpers: dst[i] = src[i] + 1 for i < count.

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };

layout(push_constant) uniform Params { uint count; } params;

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < params.count) dst[i] = src[i] + 1u;
}
