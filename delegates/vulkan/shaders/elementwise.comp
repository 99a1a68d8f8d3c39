#version 450
#extension GL_GOOGLE_include_directive : require
// A fused chain of elementwise ops: load operand 0, apply up to 8 unary ops
// or binary ops (with another operand, or an immediate scalar), store.
// Every operand is read with its own broadcast strides against the output
// shape, so a chain costs one read per operand and one write, whatever its
// length. Layout of the parameter block: ElementwiseParams in
// delegates/vulkan/kernel_params.h.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Params { uint params[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float out_data[]; };
layout(set = 0, binding = 2) readonly buffer In0 { float in0[]; };
layout(set = 0, binding = 3) readonly buffer In1 { float in1[]; };
layout(set = 0, binding = 4) readonly buffer In2 { float in2[]; };
layout(set = 0, binding = 5) readonly buffer In3 { float in3[]; };
layout(set = 0, binding = 6) readonly buffer In4 { float in4[]; };

layout(push_constant) uniform Push { uint base; } pc;

const uint kMaxRank = 8u;
const uint kPerThread = 4u;
// Offsets inside the parameter block.
const uint kTotal = 0u;
const uint kRank = 1u;
const uint kOperands = 2u;
const uint kOps = 3u;
const uint kContiguousMask = 4u;
const uint kDims = 8u;
const uint kStrides = 16u;  // kMaxRank ints per operand
const uint kOpList = 56u;   // 4 words per op: code word, p0, p1, unused

float load_operand(uint o, uint i) {
  switch (o) {
    case 0u: return in0[i];
    case 1u: return in1[i];
    case 2u: return in2[i];
    case 3u: return in3[i];
    default: return in4[i];
  }
}

void main() {
  const uint base = pc.base;
  const uint total = params[base + kTotal];
  const uint rank = params[base + kRank];
  const uint operands = params[base + kOperands];
  const uint ops = params[base + kOps];
  const uint contiguous = params[base + kContiguousMask];
  const uint first = linear_group() * (gl_WorkGroupSize.x * kPerThread) + gl_LocalInvocationID.x;
  for (uint t = 0u; t < kPerThread; ++t) {
    const uint idx = first + t * gl_WorkGroupSize.x;
    if (idx >= total) return;
    uint coord[kMaxRank];
    if (contiguous != (1u << operands) - 1u) {
      uint rest = idx;
      for (uint d = rank; d-- > 0u;) {
        const uint dim = params[base + kDims + d];
        coord[d] = rest % dim;
        rest /= dim;
      }
    }
    float value[5];
    for (uint o = 0u; o < operands; ++o) {
      uint offset = idx;
      if ((contiguous & (1u << o)) == 0u) {
        int off = 0;
        for (uint d = 0u; d < rank; ++d) off += int(coord[d]) * int(params[base + kStrides + o * kMaxRank + d]);
        offset = uint(off);
      }
      value[o] = load_operand(o, offset);
    }
    float acc = value[0];
    for (uint i = 0u; i < ops; ++i) {
      const uint word = params[base + kOpList + 4u * i];
      const float p0 = uintBitsToFloat(params[base + kOpList + 4u * i + 1u]);
      const float p1 = uintBitsToFloat(params[base + kOpList + 4u * i + 2u]);
      const uint code = word & 0xFFu;
      if (code < OP_ADD) {
        acc = apply_unary(code, acc, p0, p1);
        continue;
      }
      // Binary: the other side is operand (word >> 8) & 0xFF, or the
      // immediate p0 (bit 17); bit 16 puts the chain value on the right.
      const float other = (word & (1u << 17)) != 0u ? p0 : value[(word >> 8) & 0xFFu];
      acc = (word & (1u << 16)) != 0u ? apply_binary(code, other, acc) : apply_binary(code, acc, other);
    }
    out_data[idx] = acc;
  }
}
