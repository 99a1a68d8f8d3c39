// VGF matmul: row-major [batch..., M, K] x [batch..., K, N] → [batch..., M, N],
// batch dims broadcast (stride 0 where an operand's dim is 1). One
// invocation per output element.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "../../../shared_gpu/shaders/half_io.glsl"
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
HALF_IN(0, AH, a)
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
HALF_IN(1, BH, b)
layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
HALF_OUT(2, YH, y)

layout(push_constant) uniform Params {
  uint m, n, k, batch_rank;
  uint count;
  uint unused0, unused1, unused2;
  uint batch_shape[4];
  uint a_strides[4];  // elements per step of each batch dim
  uint b_strides[4];
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint col = i % p.n;
  uint t = i / p.n;
  uint row = t % p.m;
  uint rest = t / p.m;
  uint ia = 0u;
  uint ib = 0u;
  for (int d = int(p.batch_rank) - 1; d >= 0; --d) {
    uint idx = rest % p.batch_shape[d];
    rest /= p.batch_shape[d];
    ia += idx * p.a_strides[d];
    ib += idx * p.b_strides[d];
  }
  ia += row * p.k;
  ib += col;
  float acc = 0.0;
  for (uint kk = 0u; kk < p.k; ++kk) acc += LOAD(0, a, ia + kk) * LOAD(1, b, ib + kk * p.n);
  STORE(2, y, i, acc);
}
