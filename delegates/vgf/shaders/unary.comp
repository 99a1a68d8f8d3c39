// VGF unary operators (abs, neg, sin, cos, exp, reciprocal, rsqrt, sigmoid,
// tanh, clamp, log, floor, ceil, erf) and the copy behind reshape, with the
// tail folded into them (tail.glsl). One invocation per element.
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

// op: 0 copy, 1 abs, 2 neg, 3 sin, 4 cos, 5 exp, 6 reciprocal, 7 rsqrt,
// 8 sigmoid, 9 tanh, 10 clamp(lo, hi), 11 log, 12 floor, 13 ceil, 14 erf. Mirrored
// by UnaryCode in dispatch_plan.cc.
layout(push_constant) uniform Params {
  uint count;
  uint op;
  float lo;
  float hi;
  Tail tail;
} p;

// Written out rather than the builtin, whose precision is implementation
// defined and whose exp-based forms overflow to NaN for large |v|.
float tanh_exact(float v) {
  float t = exp(-2.0 * abs(v));
  float r = (1.0 - t) / (1.0 + t);
  return v < 0.0 ? -r : r;
}

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  float v = LOAD(0, x, i);
  float r = v;
  switch (p.op) {
    case 1u: r = abs(v); break;
    case 2u: r = -v; break;
    case 3u: r = sin(v); break;
    case 4u: r = cos(v); break;
    case 5u: r = exp(v); break;
    case 6u: r = 1.0 / v; break;
    case 7u: r = 1.0 / sqrt(v); break;
    case 8u: r = 1.0 / (1.0 + exp(-v)); break;
    case 9u: r = tanh_exact(v); break;
    // max before min, as numpy.clip: with lo > hi every element becomes hi.
    case 10u: r = min(max(v, p.lo), p.hi); break;
    case 11u: r = log(v); break;
    case 12u: r = floor(v); break;
    case 13u: r = ceil(v); break;
    case 14u: r = onnx_erf(v); break;
    default: break;
  }
  STORE(2, y, i, apply_tail(p.tail, i, r));
}
