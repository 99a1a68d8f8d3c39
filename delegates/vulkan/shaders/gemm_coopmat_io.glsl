// What gemm_coopmat.glsl and gemm_coopmat_fixed.glsl share: gemm.comp's
// bindings and push constants (GemmPush in delegates/vulkan/kernel_params.h),
// an image's batch offsets, and the f32 loads of A and B, zero outside the
// matrices, into the registers a K step goes through. The including file
// declares kVecA and kVecB (specialisation constants) first.
layout(set = 0, binding = 0) readonly restrict buffer A { float a[]; };
layout(set = 0, binding = 0) readonly restrict buffer A4 { vec4 a4[]; };
layout(set = 0, binding = 1) readonly restrict buffer B { float b[]; };
layout(set = 0, binding = 1) readonly restrict buffer B4 { vec4 b4[]; };
layout(set = 0, binding = 2) readonly restrict buffer C { float c[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
HALF_IN(0, AH, a)
HALF_IN4(0, AH4, a)
HALF_IN(1, BH, b)
HALF_IN4(1, BH4, b)
HALF_IN(2, CH, c)
HALF_OUT(3, YH, y)

layout(push_constant) uniform Push {
  uint m, n, k;
  int a_row_stride, a_col_stride;
  int b_row_stride, b_col_stride;
  int c_row_stride, c_col_stride;
  uint batch1, batch2;
  int a_batch_stride0, a_batch_stride1, a_batch_stride2;
  int b_batch_stride0, b_batch_stride1, b_batch_stride2;
  float alpha, beta;
  uint has_c;
  uint epilogue_ops;
  float epilogue_p0, epilogue_p1, epilogue_p2, epilogue_p3;
} pc;

uint tid;
uint row0, col0;
int a_base, b_base;

// Workgroup z's image: its offsets into A and B.
void set_batch_bases(uint z) {
  const uint i2 = z % pc.batch2;
  const uint i1 = (z / pc.batch2) % pc.batch1;
  const uint i0 = z / (pc.batch2 * pc.batch1);
  a_base = int(i0) * pc.a_batch_stride0 + int(i1) * pc.a_batch_stride1 + int(i2) * pc.a_batch_stride2;
  b_base = int(i0) * pc.b_batch_stride0 + int(i1) * pc.b_batch_stride1 + int(i2) * pc.b_batch_stride2;
}

// A's element (r, kk) and B's (kk, col), zero outside the matrix.
float a_at(uint r, uint kk) {
  return (r < pc.m && kk < pc.k) ? LOAD(0, a, a_base + int(r) * pc.a_row_stride + int(kk) * pc.a_col_stride) : 0.0;
}
float b_at(uint kk, uint col) {
  return (kk < pc.k && col < pc.n) ? LOAD(1, b, b_base + int(kk) * pc.b_row_stride + int(col) * pc.b_col_stride) : 0.0;
}
// Four consecutive elements of A's row r from kk, or of B's row kk from
// col. One return and no break: glslc's unroller leaves loops alone whose
// bodies inline an early return.
vec4 a_quad(uint r, uint kk) {
  vec4 v = vec4(0.0);
  if (kVecA) {
    if (r < pc.m && kk < pc.k) v = LOAD4(0, a, (a_base + int(r) * pc.a_row_stride + int(kk)) / 4);
  } else {
    v = vec4(a_at(r, kk), a_at(r, kk + 1u), a_at(r, kk + 2u), a_at(r, kk + 3u));
  }
  return v;
}
vec4 b_quad(uint kk, uint col) {
  vec4 v = vec4(0.0);
  if (kVecB) {
    if (kk < pc.k && col < pc.n) v = LOAD4(1, b, (b_base + int(kk) * pc.b_row_stride + int(col)) / 4);
  } else {
    v = vec4(b_at(kk, col), b_at(kk, col + 1u), b_at(kk, col + 2u), b_at(kk, col + 3u));
  }
  return v;
}

// Eight f32s rounded to f16, as one uvec4 of a shared tile.
uvec4 halves(vec4 lo, vec4 hi) {
  return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}
