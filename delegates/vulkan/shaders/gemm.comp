#version 450
#extension GL_GOOGLE_include_directive : require
// Batched GEMM for MatMul and Gemm: Y = alpha * A.B + beta * C, then the
// fused epilogue ops. Each workgroup of 256 invocations computes a 64x64
// tile of Y, each invocation 4x4 outputs, walking K in steps of 16 through
// shared memory. A and B are read through (row, column) strides, so
// transposed operands need no copy; C broadcasts through its strides.
// Push constants: GemmPush in delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer A { float a[]; };
layout(set = 0, binding = 1) readonly restrict buffer B { float b[]; };
layout(set = 0, binding = 2) readonly restrict buffer C { float c[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
HALF_IN(0, AH, a)
HALF_IN(1, BH, b)
HALF_IN(2, CH, c)
HALF_OUT(3, YH, y)

layout(push_constant) uniform Push {
  uint m, n, k;
  int a_row_stride, a_col_stride;
  int b_row_stride, b_col_stride;
  int c_row_stride, c_col_stride;
  // Up to three broadcast batch dims (grid z = their product); dim 0's size
  // is implied.
  uint batch1, batch2;
  int a_batch_stride0, a_batch_stride1, a_batch_stride2;
  int b_batch_stride0, b_batch_stride1, b_batch_stride2;
  float alpha, beta;
  uint has_c;
  uint epilogue_ops;
  // Scalars, not a vec4: a vec4 would be aligned to 16 bytes in the block.
  float epilogue_p0, epilogue_p1, epilogue_p2, epilogue_p3;
} pc;

const uint kTile = 64u;
const uint kTileK = 16u;

// A tile stored k-major; the +1 column keeps the transposing stores of a
// 16-wide row of A on distinct banks.
shared float a_tile[kTileK][kTile + 1u];
shared float b_tile[kTileK][kTile];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint tx = tid % 16u;
  const uint ty = tid / 16u;
  const uint row0 = gl_WorkGroupID.y * kTile;
  const uint col0 = gl_WorkGroupID.x * kTile;

  const uint z = gl_WorkGroupID.z;
  const uint i2 = z % pc.batch2;
  const uint i1 = (z / pc.batch2) % pc.batch1;
  const uint i0 = z / (pc.batch2 * pc.batch1);
  const int a_base = int(i0) * pc.a_batch_stride0 + int(i1) * pc.a_batch_stride1 + int(i2) * pc.a_batch_stride2;
  const int b_base = int(i0) * pc.b_batch_stride0 + int(i1) * pc.b_batch_stride1 + int(i2) * pc.b_batch_stride2;

  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < pc.k; k0 += kTileK) {
    for (uint s = 0u; s < 4u; ++s) {
      const uint e = tid + s * 256u;
      // A: 64 rows x 16 k, consecutive invocations along k.
      const uint ar = e / kTileK;
      const uint ak = e % kTileK;
      const uint gr = row0 + ar;
      const uint gk = k0 + ak;
      a_tile[ak][ar] = (gr < pc.m && gk < pc.k)
          ? LOAD(0, a, a_base + int(gr) * pc.a_row_stride + int(gk) * pc.a_col_stride) : 0.0;
      // B: 16 k x 64 columns, consecutive invocations along the columns.
      const uint bk = e / kTile;
      const uint bc = e % kTile;
      const uint hk = k0 + bk;
      const uint hc = col0 + bc;
      b_tile[bk][bc] = (hk < pc.k && hc < pc.n)
          ? LOAD(1, b, b_base + int(hk) * pc.b_row_stride + int(hc) * pc.b_col_stride) : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < kTileK; ++kk) {
      float av[4];
      float bv[4];
      for (uint i = 0u; i < 4u; ++i) av[i] = a_tile[kk][ty + 16u * i];
      for (uint j = 0u; j < 4u; ++j) bv[j] = b_tile[kk][tx + 16u * j];
      for (uint i = 0u; i < 4u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  const uint y_base = z * pc.m * pc.n;
  for (uint i = 0u; i < 4u; ++i) {
    const uint r = row0 + ty + 16u * i;
    if (r >= pc.m) continue;
    for (uint j = 0u; j < 4u; ++j) {
      const uint col = col0 + tx + 16u * j;
      if (col >= pc.n) continue;
      float v = pc.alpha * acc[i][j];
      if (pc.has_c != 0u) v += pc.beta * LOAD(2, c, int(r) * pc.c_row_stride + int(col) * pc.c_col_stride);
      STORE(3, y, y_base + r * pc.n + col, apply_epilogue(pc.epilogue_ops, vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3), v));
    }
  }
}
