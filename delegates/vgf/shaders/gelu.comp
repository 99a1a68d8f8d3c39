// Custom compute shader for ONNX Gelu (TOSA has no GELU, and its erf/tanh
// decomposition loses the negative tail to cancellation in 1 + erf): the
// shader a VGF compute segment carries, like hardswish.comp. Bindings: 0
// input, 1 output; push constants: the element count and the form (0:
// approximate "none", 1: "tanh"); workgroups of 64 spread over x and y.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "erf.glsl"

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint count;
  uint tanh_form;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  float v = x[i];
  if (p.tanh_form != 0u) {
    // x/2 (1 + tanh(u)) = x * sigmoid(2u): no cancellation for large negative x.
    float u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
    y[i] = v / (1.0 + exp(-2.0 * u));
  } else {
    // For x < 0 the bracket 1 + erf(x / sqrt 2) is erfc(|x| / sqrt 2), taken directly.
    float z = v * 0.70710678118654752;
    y[i] = 0.5 * v * (z < -0.5 ? erfc_positive(-z) : 1.0 + erf_f32(z));
  }
}
