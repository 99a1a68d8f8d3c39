// VGF select (TOSA SELECT): y = cond != 0 ? a : b with broadcasting;
// operands have the output's rank, and a dim of size 1 has stride 0. The
// condition is f32 (a bool constant folded to 0/1 by the lowering). One
// invocation per output element.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "../../../shared_gpu/shaders/half_io.glsl"
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer C { float c[]; };
HALF_IN(0, CH, c)
layout(std430, set = 0, binding = 1) readonly buffer A { float a[]; };
HALF_IN(1, AH, a)
layout(std430, set = 0, binding = 2) readonly buffer B { float b[]; };
HALF_IN(2, BH, b)
layout(std430, set = 0, binding = 3) writeonly buffer Y { float y[]; };
HALF_OUT(3, YH, y)

// Strides are in elements.
layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint shape[6];
  uint c_strides[6];
  uint a_strides[6];
  uint b_strides[6];
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint rest = i;
  uint ic = 0u;
  uint ia = 0u;
  uint ib = 0u;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint idx = rest % p.shape[d];
    rest /= p.shape[d];
    ic += idx * p.c_strides[d];
    ia += idx * p.a_strides[d];
    ib += idx * p.b_strides[d];
  }
  STORE(3, y, i, LOAD(0, c, ic) != 0.0 ? LOAD(1, a, ia) : LOAD(2, b, ib));
}
