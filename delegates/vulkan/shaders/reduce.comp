#version 450
#extension GL_GOOGLE_include_directive : require
// ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd and
// GlobalAveragePool: each workgroup of 256 invocations reduces one output
// over any set of axes (kept and reduced dims with their input strides),
// in a tree through shared memory. The op is a specialisation constant
// (kReduceOp: 0 sum times the block's scale, 1 max, 2 min, 3 product).
// Layout of the parameter block: ReduceParams in
// delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;
const uint kGroup = 256u;

layout(constant_id = 0) const uint kReduceOp = 0u;

layout(set = 0, binding = 0) readonly restrict buffer Params { uint params[]; };
layout(set = 0, binding = 1) readonly restrict buffer X { float x[]; };
HALF_IN(1, XH, x)
layout(set = 0, binding = 2) writeonly restrict buffer Y { float y[]; };
HALF_OUT(2, YH, y)

layout(push_constant) uniform Push { uint base; } pc;

const uint kMaxRank = 8u;
const uint kOutputs = 0u;
const uint kCount = 1u;
const uint kKeptRank = 2u;
const uint kReducedRank = 3u;
const uint kScale = 4u;
const uint kKeptDims = 8u;
const uint kKeptStrides = 16u;
const uint kReducedDims = 24u;
const uint kReducedStrides = 32u;

shared float partial[kGroup];

// As the CPU kernel folds (std::max(acc, v) keeps acc unless acc < v).
float combine(float acc, float v) {
  if (kReduceOp == 1u) return acc < v ? v : acc;
  if (kReduceOp == 2u) return v < acc ? v : acc;
  if (kReduceOp == 3u) return acc * v;
  return acc + v;
}

float identity() {
  if (kReduceOp == 1u) return -infinity();
  if (kReduceOp == 2u) return infinity();
  return kReduceOp == 3u ? 1.0 : 0.0;
}

void main() {
  const uint base = pc.base;
  const uint o = linear_group();
  if (o >= params[base + kOutputs]) return;  // uniform across the workgroup
  const uint count = params[base + kCount];
  uint start = 0u;
  uint rest = o;
  for (uint d = params[base + kKeptRank]; d-- > 0u;) {
    const uint dim = params[base + kKeptDims + d];
    start += (rest % dim) * params[base + kKeptStrides + d];
    rest /= dim;
  }
  const uint reduced_rank = params[base + kReducedRank];
  float acc = identity();
  if (reduced_rank == 1u) {
    // One run (the host merges contiguous reduced dims): no index arithmetic.
    const uint stride = params[base + kReducedStrides];
    for (uint i = gl_LocalInvocationID.x; i < count; i += kGroup) acc = combine(acc, LOAD(1, x, start + i * stride));
  }
  for (uint i = reduced_rank == 1u ? count : gl_LocalInvocationID.x; i < count; i += kGroup) {
    uint offset = start;
    uint r = i;
    for (uint d = reduced_rank; d-- > 0u;) {
      const uint dim = params[base + kReducedDims + d];
      offset += (r % dim) * params[base + kReducedStrides + d];
      r /= dim;
    }
    acc = combine(acc, LOAD(1, x, offset));
  }
  partial[gl_LocalInvocationID.x] = acc;
  barrier();
  for (uint s = kGroup / 2u; s > 0u; s >>= 1) {
    if (gl_LocalInvocationID.x < s)
      partial[gl_LocalInvocationID.x] = combine(partial[gl_LocalInvocationID.x], partial[gl_LocalInvocationID.x + s]);
    barrier();
  }
  if (gl_LocalInvocationID.x == 0u)
    STORE(2, y, o, kReduceOp == 0u ? partial[0] * uintBitsToFloat(params[base + kScale]) : partial[0]);
}
