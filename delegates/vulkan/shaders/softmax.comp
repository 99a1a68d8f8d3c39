#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax over rows of `row_length` elements spaced `inner` apart (the input
// viewed as outer x row_length x inner), one workgroup of 64 invocations per
// row: max, then the sum of exp(x - max), then the normalised values.
// Push constants: SoftmaxPush in delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) writeonly restrict buffer Y { float y[]; };
HALF_OUT(1, YH, y)

layout(push_constant) uniform Push { uint rows, row_length, inner; } pc;

shared float partial[64];

void main() {
  const uint row = linear_group();
  if (row >= pc.rows) return;  // uniform across the workgroup
  const uint lid = gl_LocalInvocationID.x;
  const uint base = row / pc.inner * pc.row_length * pc.inner + row % pc.inner;

  float m = -infinity();
  for (uint i = lid; i < pc.row_length; i += 64u) m = max(m, LOAD(0, x, base + i * pc.inner));
  partial[lid] = m;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (lid < s) partial[lid] = max(partial[lid], partial[lid + s]);
    barrier();
  }
  const float row_max = partial[0];
  barrier();

  float sum = 0.0;
  for (uint i = lid; i < pc.row_length; i += 64u) sum += exp(LOAD(0, x, base + i * pc.inner) - row_max);
  partial[lid] = sum;
  barrier();
  for (uint s = 32u; s > 0u; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  const float scale = 1.0 / partial[0];
  for (uint i = lid; i < pc.row_length; i += 64u) STORE(1, y, base + i * pc.inner, exp(LOAD(0, x, base + i * pc.inner) - row_max) * scale);
}
