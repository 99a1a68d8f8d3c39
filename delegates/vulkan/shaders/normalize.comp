#version 450
#extension GL_GOOGLE_include_directive : require
// LayerNormalization and GroupNormalization: one workgroup of 128
// invocations per row of `inner` contiguous elements. Two passes over the
// row, as the CPU oracle does — the mean, then the mean of squared
// deviations (which does not cancel as E[x^2] - E[x]^2 can) — then
// y = (x - mean) / sqrt(var + epsilon) * scale + bias with scale and bias
// from row (row % param_rows) of the table. Push constants: NormPush in
// delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 128) in;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer Table { float table[]; };
layout(set = 0, binding = 2) writeonly restrict buffer Y { float y[]; };
HALF_OUT(2, YH, y)

layout(push_constant) uniform Push { uint rows, inner, param_rows; float epsilon; } pc;

shared float partial[128];

float row_sum(float v) {
  const uint lid = gl_LocalInvocationID.x;
  partial[lid] = v;
  barrier();
  for (uint s = 64u; s > 0u; s >>= 1) {
    if (lid < s) partial[lid] += partial[lid + s];
    barrier();
  }
  const float total = partial[0];
  barrier();  // partial is reused by the next sum
  return total;
}

void main() {
  const uint row = linear_group();
  if (row >= pc.rows) return;  // uniform across the workgroup
  const uint lid = gl_LocalInvocationID.x;
  const uint base = row * pc.inner;
  const float n = float(pc.inner);

  float s = 0.0;
  for (uint i = lid; i < pc.inner; i += 128u) s += LOAD(0, x, base + i);
  const float mean = row_sum(s) / n;
  float sq = 0.0;
  for (uint i = lid; i < pc.inner; i += 128u) {
    const float d = LOAD(0, x, base + i) - mean;
    sq += d * d;
  }
  const float inv_std = 1.0 / sqrt(row_sum(sq) / n + pc.epsilon);

  const uint scale = (row % pc.param_rows) * pc.inner;
  const uint bias = pc.param_rows * pc.inner + scale;
  for (uint i = lid; i < pc.inner; i += 128u)
    STORE(2, y, base + i, (LOAD(0, x, base + i) - mean) * inv_std * table[scale + i] + table[bias + i]);
}
