// VGF binary operators (add, sub, mul, pow) with broadcasting: operands have
// the output's rank, and a dim of size 1 has stride 0. One invocation per
// output element. What reads nothing but this op's output may be folded in
// by the dispatch plan (tail.glsl: a residual Add and its ReLU, the
// normalised value of a LayerNormalization times gamma plus beta).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;

#include "../../../shared_gpu/shaders/half_io.glsl"

#include "../../../shared_gpu/shaders/gpu_ops.glsl"

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
HALF_IN(0, AH, a)
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
HALF_IN(1, BH, b)
layout(std430, set = 0, binding = 2) readonly buffer Affine { float affine[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Y { float y[]; };
HALF_OUT(3, YH, y)

#include "tail.glsl"

// op: 0 add, 1 sub, 2 mul, 3 pow. Strides are in elements. The tail's
// channels word comes fourth, the rest of it last.
layout(push_constant) uniform Params {
  uint count;
  uint op;
  uint rank;
  uint tail_channels;
  uint shape[6];
  uint a_strides[6];
  uint b_strides[6];
  uint tail_ops;
  float tail_p0, tail_p1, tail_p2, tail_p3;
} p;

// std::pow's results where GLSL pow() is undefined: negative bases with
// integral exponents, and zero bases.
float pow_c(float base, float e) {
  if (e == 0.0) return 1.0;
  if (base == 0.0) return e > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
  float r = pow(abs(base), e);
  if (base < 0.0) {
    if (fract(e) != 0.0) return uintBitsToFloat(0x7fc00000u);
    if (mod(e, 2.0) == 1.0) r = -r;
  }
  return r;
}

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint rest = i;
  uint ia = 0u;
  uint ib = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint idx = rest % p.shape[d];
    rest /= p.shape[d];
    ia += idx * p.a_strides[d];
    ib += idx * p.b_strides[d];
  }
  float u = LOAD(0, a, ia);
  float v = LOAD(1, b, ib);
  float r;
  switch (p.op) {
    case 0u: r = u + v; break;
    case 1u: r = u - v; break;
    case 2u: r = u * v; break;
    default: r = pow_c(u, v); break;
  }
  STORE(3, y, i, apply_tail(Tail(p.tail_channels, p.tail_ops, p.tail_p0, p.tail_p1, p.tail_p2, p.tail_p3), i, r));
}
