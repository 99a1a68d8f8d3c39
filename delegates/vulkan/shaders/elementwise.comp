#version 450
#extension GL_GOOGLE_include_directive : require
// A fused chain of elementwise ops: load operand 0, apply up to 8 unary ops,
// binary ops (with another operand, or an immediate scalar) or Where
// selects, store.
// Every operand is read with its own broadcast strides against the output
// shape, so a chain costs one read per operand and one write, whatever its
// length.
//
// The chain's structure (operand count, which operands are contiguous, the
// op words) is a set of specialisation constants, so each chain compiles to
// straight-line code with no per-element interpretation; the parameter
// block holds shapes, strides and op parameters. Both are described by
// ElementwiseSpecialization and ElementwiseParams in
// delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint kOperandCount = 1u;
layout(constant_id = 1) const uint kContiguousMask = 1u;
layout(constant_id = 2) const uint kOpCount = 0u;
layout(constant_id = 3) const uint kOp0 = 0u;
layout(constant_id = 4) const uint kOp1 = 0u;
layout(constant_id = 5) const uint kOp2 = 0u;
layout(constant_id = 6) const uint kOp3 = 0u;
layout(constant_id = 7) const uint kOp4 = 0u;
layout(constant_id = 8) const uint kOp5 = 0u;
layout(constant_id = 9) const uint kOp6 = 0u;
layout(constant_id = 10) const uint kOp7 = 0u;

layout(set = 0, binding = 0) readonly restrict buffer Params { uint params[]; };
layout(set = 0, binding = 1) writeonly restrict buffer Out { float out_data[]; };
layout(set = 0, binding = 2) readonly restrict buffer In0 { float in0[]; };
layout(set = 0, binding = 3) readonly restrict buffer In1 { float in1[]; };
layout(set = 0, binding = 4) readonly restrict buffer In2 { float in2[]; };
layout(set = 0, binding = 5) readonly restrict buffer In3 { float in3[]; };
layout(set = 0, binding = 6) readonly restrict buffer In4 { float in4[]; };
HALF_OUT(1, OutH, out_data)
HALF_IN(2, In0H, in0)
HALF_IN(3, In1H, in1)
HALF_IN(4, In2H, in2)
HALF_IN(5, In3H, in3)
HALF_IN(6, In4H, in4)

layout(push_constant) uniform Push { uint base; } pc;

const uint kMaxRank = 8u;
const uint kPerThread = 4u;
// Word offsets inside the parameter block.
const uint kTotal = 0u;
const uint kRank = 1u;
const uint kDims = 8u;
const uint kStrides = 16u;  // kMaxRank ints per operand
const uint kOpParams = 56u;  // p0, p1 per op

// Operand o's element for output index idx: the index itself when the
// operand is contiguous, else the walk through its broadcast strides.
uint offset_of(uint o, uint idx, uint rank) {
  if ((kContiguousMask & (1u << o)) != 0u) return idx;
  int offset = 0;
  uint rest = idx;
  for (uint d = rank; d-- > 0u;) {
    const uint dim = params[pc.base + kDims + d];
    offset += int(rest % dim) * int(params[pc.base + kStrides + o * kMaxRank + d]);
    rest /= dim;
  }
  return uint(offset);
}

// Operand o's value (o in the low byte).
float pick(uint o, float v0, float v1, float v2, float v3, float v4) {
  o &= 0xFFu;
  return o == 0u ? v0 : o == 1u ? v1 : o == 2u ? v2 : o == 3u ? v3 : v4;
}

float run_op(uint word, uint i, float acc, float v0, float v1, float v2, float v3, float v4) {
  const float p0 = uintBitsToFloat(params[pc.base + kOpParams + 2u * i]);
  const float p1 = uintBitsToFloat(params[pc.base + kOpParams + 2u * i + 1u]);
  const uint code = word & 0xFFu;
  if (code < OP_ADD) return apply_unary(code, acc, p0, p1);
  float other = pick(word >> 8, v0, v1, v2, v3, v4);
  if ((word & (1u << 17)) != 0u) other = p0;
  const bool reversed = (word & (1u << 16)) != 0u;
  // Where: the chain value is X (the true side), or Y when reversed.
  if (code == OP_WHERE) return (pick(word >> 24, v0, v1, v2, v3, v4) != 0.0) != reversed ? acc : other;
  return reversed ? apply_binary(code, other, acc) : apply_binary(code, acc, other);
}

void main() {
  const uint total = params[pc.base + kTotal];
  const uint rank = params[pc.base + kRank];
  const uint first = linear_group() * (gl_WorkGroupSize.x * kPerThread) + gl_LocalInvocationID.x;
  for (uint t = 0u; t < kPerThread; ++t) {
    const uint idx = first + t * gl_WorkGroupSize.x;
    if (idx >= total) return;
    const float v0 = LOAD(2, in0, offset_of(0u, idx, rank));
    float v1 = 0.0, v2 = 0.0, v3 = 0.0, v4 = 0.0;
    if (kOperandCount > 1u) v1 = LOAD(3, in1, offset_of(1u, idx, rank));
    if (kOperandCount > 2u) v2 = LOAD(4, in2, offset_of(2u, idx, rank));
    if (kOperandCount > 3u) v3 = LOAD(5, in3, offset_of(3u, idx, rank));
    if (kOperandCount > 4u) v4 = LOAD(6, in4, offset_of(4u, idx, rank));
    float acc = v0;
    if (kOpCount > 0u) acc = run_op(kOp0, 0u, acc, v0, v1, v2, v3, v4);
    if (kOpCount > 1u) acc = run_op(kOp1, 1u, acc, v0, v1, v2, v3, v4);
    if (kOpCount > 2u) acc = run_op(kOp2, 2u, acc, v0, v1, v2, v3, v4);
    if (kOpCount > 3u) acc = run_op(kOp3, 3u, acc, v0, v1, v2, v3, v4);
    if (kOpCount > 4u) acc = run_op(kOp4, 4u, acc, v0, v1, v2, v3, v4);
    if (kOpCount > 5u) acc = run_op(kOp5, 5u, acc, v0, v1, v2, v3, v4);
    if (kOpCount > 6u) acc = run_op(kOp6, 6u, acc, v0, v1, v2, v3, v4);
    if (kOpCount > 7u) acc = run_op(kOp7, 7u, acc, v0, v1, v2, v3, v4);
    STORE(1, out_data, idx, acc);
  }
}
