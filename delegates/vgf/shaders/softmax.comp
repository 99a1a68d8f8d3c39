// Custom compute shader for Softmax over contiguous rows (the last axis in
// memory; TOSA has no softmax, and its decomposition — reduce_max, sub,
// exp, reduce_sum, reciprocal, mul — is four dispatches even with their
// tails folded): the shader a VGF compute segment carries, like
// layer_norm.comp. One workgroup per row: the maximum, then the sum of
// exp(x - max) (a Kahan sum per lane and a tree in shared memory), then
// y = exp(x - max) * (1 / sum), as the decomposition computed it.
// Bindings: 0 x, 1 y; push constants: the element count, the row length.
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
  uint count;
  uint cols;
} p;

shared float partial[64];

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  const uint lane = gl_LocalInvocationID.x;
  if (row * p.cols >= p.count) return;  // uniform across the workgroup
  const uint base = row * p.cols;
  float best = uintBitsToFloat(0xff800000u);
  for (uint j = lane; j < p.cols; j += 64u) best = max(best, x[base + j]);
  partial[lane] = best;
  barrier();
  for (uint half_lanes = 32u; half_lanes > 0u; half_lanes /= 2u) {
    if (lane < half_lanes) partial[lane] = max(partial[lane], partial[lane + half_lanes]);
    barrier();
  }
  const float row_max = partial[0];
  barrier();
  precise float sum = 0.0;
  precise float carry = 0.0;
  for (uint j = lane; j < p.cols; j += 64u) {
    precise float term = exp(x[base + j] - row_max) - carry;
    precise float next = sum + term;
    carry = (next - sum) - term;
    sum = next;
  }
  partial[lane] = sum - carry;
  barrier();
  for (uint half_lanes = 32u; half_lanes > 0u; half_lanes /= 2u) {
    if (lane < half_lanes) partial[lane] += partial[lane + half_lanes];
    barrier();
  }
  const float inv_sum = 1.0 / partial[0];
  for (uint j = lane; j < p.cols; j += 64u) y[base + j] = exp(x[base + j] - row_max) * inv_sum;
}
