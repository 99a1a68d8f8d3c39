// VGF reduce_sum and reduce_max along one axis: the input is viewed as
// [outer, length, inner] and the output as [outer, 1, inner]. One invocation
// per output element.
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };

// op: 0 sum, 1 max.
layout(push_constant) uniform Params {
  uint outer;
  uint len;
  uint inner;
  uint op;
  uint count;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint base = (i / p.inner) * p.len * p.inner + i % p.inner;
  if (p.op == 1u) {
    float best = uintBitsToFloat(0xff800000u);
    for (uint l = 0u; l < p.len; ++l) best = max(best, x[base + l * p.inner]);
    y[i] = best;
    return;
  }
  // Compensated (Kahan) sum: the portable kernels sum long rows in double.
  precise float sum = 0.0;
  precise float carry = 0.0;
  for (uint l = 0u; l < p.len; ++l) {
    precise float term = x[base + l * p.inner] - carry;
    precise float next = sum + term;
    carry = (next - sum) - term;
    sum = next;
  }
  y[i] = sum;
}
