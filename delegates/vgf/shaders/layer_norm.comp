// Custom compute shader for ONNX LayerNormalization over contiguous rows
// (TOSA has none; its decomposition is five dispatches even with their
// tails folded): the shader a VGF compute segment carries, like gelu.comp.
// One workgroup per row: 64 invocations each sum every 64th element
// (Kahan-compensated), a tree in shared memory gives the mean, a second
// pass the variance of the centred values (two passes, as the portable
// kernel), then y = (x - mean) / sqrt(var + epsilon) * scale + bias.
// Bindings: 0 x, 1 scale, 2 bias (the scale again without one), 3 y; push
// constants: the element count, the row length, epsilon's bits, has bias.
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Scale { float scale[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
  uint count;
  uint cols;
  uint epsilon_bits;
  uint has_bias;
} p;

shared float partial[64];

// The row's sum of f(v) over all lanes, every lane getting it.
float row_sum(uint base, uint lane, float mean, bool centred) {
  precise float sum = 0.0;
  precise float carry = 0.0;
  for (uint j = lane; j < p.cols; j += 64u) {
    float v = x[base + j];
    if (centred) {
      v -= mean;
      v *= v;
    }
    precise float term = v - carry;
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
  const float total = partial[0];
  barrier();  // partial is reused by the next call
  return total;
}

void main() {
  const uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  const uint lane = gl_LocalInvocationID.x;
  if (row * p.cols >= p.count) return;  // uniform across the workgroup
  const uint base = row * p.cols;
  const float n = float(p.cols);
  const float mean = row_sum(base, lane, 0.0, false) / n;
  const float var = row_sum(base, lane, mean, true) / n;
  const float inv_std = 1.0 / sqrt(var + uintBitsToFloat(p.epsilon_bits));
  for (uint j = lane; j < p.cols; j += 64u) {
    float v = (x[base + j] - mean) * inv_std * scale[j];
    if (p.has_bias != 0u) v += bias[j];
    y[base + j] = v;
  }
}
