// Custom compute shader for ONNX HardSwish (TOSA has no hard-swish): the
// shader a VGF compute segment carries. Bindings: 0 input, 1 output; push
// constant: the element count; workgroups of 64 spread over x and y.
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params { uint count; } p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  float v = x[i];
  y[i] = v * max(0.0, min(1.0, v * (1.0 / 6.0) + 0.5));
}
