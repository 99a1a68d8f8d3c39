// VGF reduce_sum and reduce_max along one axis, and global pooling: the
// input is viewed as [outer, length, inner] and the output as
// [outer, 1, inner]. Each output is reduced by `lanes` invocations of one
// workgroup (a power of two up to 64, from the dispatch plan), each over
// every lanes-th element, then by a tree in shared memory: a long row
// (LayerNormalization over 768, a 56x56 global average pool) takes
// length / lanes steps instead of length, and the workgroup's loads of one
// step are neighbours in memory (along the row, or, with inner > 1, the
// neighbouring outputs'). op: 0 sum, 1 max, 2 mean (sum / length). What
// reads nothing but the result may be folded in (tail.glsl: a
// LayerNormalization's scale by 1/n, epsilon and rsqrt).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "../../../shared_gpu/shaders/half_io.glsl"

#include "../../../shared_gpu/shaders/gpu_ops.glsl"

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
HALF_IN(0, XH, x)
layout(std430, set = 0, binding = 1) readonly buffer Affine { float affine[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { float y[]; };
HALF_OUT(2, YH, y)

#include "tail.glsl"

layout(push_constant) uniform Params {
  uint outer;
  uint len;
  uint inner;
  uint op;
  uint count;
  uint lanes;
  Tail tail;
} p;

shared float partial[64];

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint outputs = 64u / p.lanes;
  // inner == 1: a row is contiguous, so lanes of one output are neighbours;
  // else the outputs of one step are (NHWC channels of one pixel).
  const uint lane = p.inner == 1u ? t % p.lanes : t / outputs;
  const uint slot = p.inner == 1u ? t / p.lanes : t % outputs;
  const uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  const uint i = group * outputs + slot;
  float acc = p.op == 1u ? uintBitsToFloat(0xff800000u) : 0.0;
  if (i < p.count) {
    const uint base = (i / p.inner) * p.len * p.inner + i % p.inner;
    if (p.op == 1u) {
      for (uint l = lane; l < p.len; l += p.lanes) acc = max(acc, LOAD(0, x, base + l * p.inner));
    } else {
      // Compensated (Kahan) sum per lane: the portable kernels sum long
      // rows in double.
      precise float sum = 0.0;
      precise float carry = 0.0;
      for (uint l = lane; l < p.len; l += p.lanes) {
        precise float term = LOAD(0, x, base + l * p.inner) - carry;
        precise float next = sum + term;
        carry = (next - sum) - term;
        sum = next;
      }
      acc = sum - carry;
    }
  }
  // Index of this invocation's partial: lanes of one output contiguous.
  const uint at = slot * p.lanes + lane;
  partial[at] = acc;
  barrier();
  for (uint half_lanes = p.lanes / 2u; half_lanes > 0u; half_lanes /= 2u) {
    if (lane < half_lanes) {
      const float other = partial[at + half_lanes];
      partial[at] = p.op == 1u ? max(partial[at], other) : partial[at] + other;
    }
    barrier();
  }
  if (lane == 0u && i < p.count) {
    STORE(2, y, i, apply_tail(p.tail, i, p.op == 2u ? partial[at] / float(p.len) : partial[at]));
  }
}
