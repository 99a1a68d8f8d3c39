// Custom compute shader for ONNX Gelu (TOSA has no GELU, and its erf/tanh
// decomposition loses the negative tail to cancellation in 1 + erf): the
// shader a VGF compute segment carries, like hardswish.comp. Bindings: 0
// input, 1 output; push constants: the element count and the form (0:
// approximate "none", 1: "tanh"); workgroups of 64 spread over x and y.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "../../../shared_gpu/shaders/erf.glsl"

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint count;
  uint tanh_form;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  y[i] = p.tanh_form != 0u ? gelu_tanh(x[i]) : gelu(x[i]);
}
