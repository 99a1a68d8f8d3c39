// VGF binary operators (add, sub, mul, pow) with broadcasting: operands have
// the output's rank, and a dim of size 1 has stride 0. One invocation per
// output element. A clamp that reads nothing but this op's output is folded
// in by the dispatch plan (a residual Add and its ReLU: one dispatch).
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };

// op: 0 add, 1 sub, 2 mul, 3 pow. Strides are in elements. clamp: 1 when
// the result is clamped to [lo, hi].
layout(push_constant) uniform Params {
  uint count;
  uint op;
  uint rank;
  uint clamp;
  uint shape[6];
  uint a_strides[6];
  uint b_strides[6];
  float lo;
  float hi;
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
  float u = a[ia];
  float v = b[ib];
  float r;
  switch (p.op) {
    case 0u: r = u + v; break;
    case 1u: r = u - v; break;
    case 2u: r = u * v; break;
    default: r = pow_c(u, v); break;
  }
  if (p.clamp != 0u) r = min(max(r, p.lo), p.hi);
  y[i] = r;
}
