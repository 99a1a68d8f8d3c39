#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
// gemm_coopmat.glsl's GEMM (same bindings, push constants and epilogue) with
// its whole geometry fixed at compile time by the including .comp file:
// tile (GEMM_TILE_M x GEMM_TILE_N, K steps of GEMM_TILE_K), subgroup grid
// (GEMM_WARPS_M x GEMM_WARPS_N subgroups of 32), shared buffers
// (GEMM_STAGES) and 16x16x16 fragments. So each subgroup's fragment counts
// are constants: glslc -O unrolls the fragment loops and splits the
// accumulator array into single variables, and a subgroup holds 4 x 2
// accumulators (a 64 x 32 warp tile). In gemm_coopmat.glsl the counts
// derive from specialisation constants, the loops stay loops over an
// array, and more than two accumulators per subgroup ran the products five
// times slower on an H100 (docs/models.md, "Tensor-core GEMM for run-time
// operands"). The lowering (gemm_coopmat in delegates/vulkan/lowering.cc)
// runs these only where the device offers 16x16x16 f16 products and
// subgroups of 32.
//
// Each K step's A and B tiles go through registers into shared memory as
// uvec4s of eight halves: from f32 buffers two vec4 loads (kVecA/kVecB) or
// eight scalar ones, rounded to f16; from f16 buffers (half_io.glsl's
// HS_HALF_IO variant, the binding's kHalfBindings bit set) one uvec4 load
// stored as it is (kOctA/kOctB: contiguous and 16-byte aligned in halves).
// The next step's loads are in flight during this step's products. With
// two shared buffers they are stored into the other one (one barrier per
// step); with one, after a barrier over the same buffer (two barriers per
// step, half the shared memory: the 128 x 256 tile's K step of 32 fits in
// 48 KiB).
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

const uint kTileM = GEMM_TILE_M;
const uint kTileN = GEMM_TILE_N;
const uint kTileK = GEMM_TILE_K;  // a multiple of 16
const uint kWarpsM = GEMM_WARPS_M;
const uint kWarpsN = GEMM_WARPS_N;
const uint kSubgroups = kWarpsM * kWarpsN;
const uint kInvocations = kSubgroups * 32u;
layout(local_size_x = GEMM_WARPS_M * GEMM_WARPS_N * 32) in;
const uint kFrag = 16u;
const uint kFragsM = kTileM / kWarpsM / kFrag;
const uint kFragsN = kTileN / kWarpsN / kFrag;

layout(constant_id = 0) const bool kVecA = false;  // A rows contiguous along K, 16-byte aligned in f32, K % 4 == 0
layout(constant_id = 1) const bool kVecB = false;  // B rows contiguous along N, 16-byte aligned in f32, N % 4 == 0
layout(constant_id = 2) const bool kOctA = false;  // the same for eight halves: row and batch strides and K % 8 == 0
layout(constant_id = 3) const bool kOctB = false;
// Always false, and not a compile-time constant on purpose: glslc then
// leaves the loops over an invocation's octets to the driver, whose own
// unrolling ran faster on an H100 than glslc's (4096^3 from f32 operands
// at 128 x 256: 1.03 against 1.16 ms).
layout(constant_id = 4) const bool kPartialOctets = false;

#include "gemm_coopmat_io.glsl"
#ifdef HS_HALF_IO
// Eight halves as one uvec4: an f16 operand's octet copied without conversion.
layout(set = 0, binding = 0) readonly restrict buffer AH8 { uvec4 a_h8[]; };
layout(set = 0, binding = 1) readonly restrict buffer BH8 { uvec4 b_h8[]; };
#endif

// A's octet q is row q / kOctRowA, k 8 * (q % kOctRowA); B's octet q is k
// q / kOctRowB, column 8 * (q % kOctRowB).
const uint kOctRowA = kTileK / 8u;
const uint kOctRowB = kTileN / 8u;
const uint kTotalA = kTileM * kOctRowA;
const uint kTotalB = kTileK * kOctRowB;
// Every invocation moves the same number of octets.
#if (GEMM_TILE_M * GEMM_TILE_K / 8) % (GEMM_WARPS_M * GEMM_WARPS_N * 32) != 0 || \
    (GEMM_TILE_K * GEMM_TILE_N / 8) % (GEMM_WARPS_M * GEMM_WARPS_N * 32) != 0
#error "a tile's octets must divide among the invocations"
#endif
const uint kOctetsA = kTotalA / kInvocations;
const uint kOctetsB = kTotalB / kInvocations;
// Shared rows are one uvec4 longer than a tile row, so the rows a fragment
// load reads start on different banks.
const uint kRowA = kOctRowA + 1u;
const uint kRowB = kOctRowB + 1u;
// GEMM_STAGES shared buffers: 2, the next step is stored into the other
// buffer while this one is read (one barrier per step); 1, it is stored
// after a barrier over the same buffer (two barriers per step, half the
// shared memory, so twice the K step fits).
const uint kStages = GEMM_STAGES;
shared uvec4 a_tile[kStages * kTileM * kRowA];
shared uvec4 b_tile[kStages * kTileK * kRowB];
// The epilogue stages one 16 x 16 fragment per subgroup.
shared float staging[kSubgroups * kFrag * kFrag];

// The next step's octets: f32 pairs of vec4s, or ready uvec4s of halves.
vec4 a_next[2 * kOctetsA];
vec4 b_next[2 * kOctetsB];
uvec4 a_next_h[kOctetsA];
uvec4 b_next_h[kOctetsB];


// Octets straight from f16 memory (kOct*: whole octets in or out of range).
bool a_octets() { return HALF_BINDING(0) && kOctA; }
bool b_octets() { return HALF_BINDING(1) && kOctB; }
uvec4 a_octet(uint r, uint kk) {
#ifdef HS_HALF_IO
  return (r < pc.m && kk < pc.k) ? a_h8[(a_base + int(r) * pc.a_row_stride + int(kk)) / 8] : uvec4(0u);
#else
  return uvec4(0u);
#endif
}
uvec4 b_octet(uint kk, uint col) {
#ifdef HS_HALF_IO
  return (kk < pc.k && col < pc.n) ? b_h8[(b_base + int(kk) * pc.b_row_stride + int(col)) / 8] : uvec4(0u);
#else
  return uvec4(0u);
#endif
}

void load_step(uint k0) {
  [[unroll]] for (uint s = 0u; s < kOctetsA; ++s) {
    const uint q = tid + s * kInvocations;
    if (kPartialOctets && q >= kTotalA) continue;
    const uint r = row0 + q / kOctRowA;
    const uint kk = k0 + 8u * (q % kOctRowA);
    if (a_octets()) {
      a_next_h[s] = a_octet(r, kk);
    } else {
      a_next[2u * s] = a_quad(r, kk);
      a_next[2u * s + 1u] = a_quad(r, kk + 4u);
    }
  }
  [[unroll]] for (uint s = 0u; s < kOctetsB; ++s) {
    const uint q = tid + s * kInvocations;
    if (kPartialOctets && q >= kTotalB) continue;
    const uint kk = k0 + q / kOctRowB;
    const uint col = col0 + 8u * (q % kOctRowB);
    if (b_octets()) {
      b_next_h[s] = b_octet(kk, col);
    } else {
      b_next[2u * s] = b_quad(kk, col);
      b_next[2u * s + 1u] = b_quad(kk, col + 4u);
    }
  }
}

void store_step(uint buf) {
  [[unroll]] for (uint s = 0u; s < kOctetsA; ++s) {
    const uint q = tid + s * kInvocations;
    if (kPartialOctets && q >= kTotalA) continue;
    a_tile[(buf * kTileM + q / kOctRowA) * kRowA + q % kOctRowA] =
        a_octets() ? a_next_h[s] : halves(a_next[2u * s], a_next[2u * s + 1u]);
  }
  [[unroll]] for (uint s = 0u; s < kOctetsB; ++s) {
    const uint q = tid + s * kInvocations;
    if (kPartialOctets && q >= kTotalB) continue;
    b_tile[(buf * kTileK + q / kOctRowB) * kRowB + q % kOctRowB] =
        b_octets() ? b_next_h[s] : halves(b_next[2u * s], b_next[2u * s + 1u]);
  }
}

void main() {
  tid = gl_LocalInvocationIndex;
  row0 = gl_WorkGroupID.y * kTileM;
  col0 = gl_WorkGroupID.x * kTileN;
  const uint z = gl_WorkGroupID.z;
  set_batch_bases(z);

  const uint warp = gl_SubgroupID;
  const uint sub_m = (warp % kWarpsM) * kFragsM * kFrag;
  const uint sub_n = (warp / kWarpsM) * kFragsN * kFrag;

  fcoopmatNV<32, gl_ScopeSubgroup, kFrag, kFrag> acc[kFragsM * kFragsN];
  [[unroll]] for (uint i = 0u; i < kFragsM * kFragsN; ++i) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, kFrag, kFrag>(0.0);

  load_step(0u);
  store_step(0u);
  barrier();
  uint buf = 0u;
  for (uint k0 = 0u; k0 < pc.k; k0 += kTileK) {
    const bool more = k0 + kTileK < pc.k;
    if (more) load_step(k0 + kTileK);
    [[unroll]] for (uint kk = 0u; kk < kTileK; kk += kFrag) {
      fcoopmatNV<16, gl_ScopeSubgroup, kFrag, kFrag> fa[kFragsM];
      fcoopmatNV<16, gl_ScopeSubgroup, kFrag, kFrag> fb[kFragsN];
      // Offsets in uvec4s: k and columns in eighths.
      [[unroll]] for (uint i = 0u; i < kFragsM; ++i)
        coopMatLoadNV(fa[i], a_tile, (buf * kTileM + sub_m + i * kFrag) * kRowA + kk / 8u, kRowA, false);
      [[unroll]] for (uint j = 0u; j < kFragsN; ++j)
        coopMatLoadNV(fb[j], b_tile, (buf * kTileK + kk) * kRowB + (sub_n + j * kFrag) / 8u, kRowB, false);
      [[unroll]] for (uint i = 0u; i < kFragsM; ++i)
        [[unroll]] for (uint j = 0u; j < kFragsN; ++j) acc[i * kFragsN + j] = coopMatMulAddNV(fa[i], fb[j], acc[i * kFragsN + j]);
    }
    if (kStages == 1u) {
      barrier();
      if (more) store_step(0u);
    } else {
      if (more) store_step(buf ^ 1u);
      buf ^= 1u;
    }
    barrier();
  }

  // Each subgroup stages one fragment at a time in its own block and its
  // invocations apply alpha, beta * C and the epilogue from there. The
  // fragment loop stays a loop (the epilogue's code once, not once per
  // element), and acc is read only at constant indices: the unrolled
  // g loop picks fragment f. A variable index would put acc in memory.
  const uint y_base = z * pc.m * pc.n;
  const vec4 p = vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3);
  const uint stage = warp * kFrag * kFrag;
  for (uint f = 0u; f < kFragsM * kFragsN; ++f) {
    [[unroll]] for (uint g = 0u; g < kFragsM * kFragsN; ++g)
      if (g == f) coopMatStoreNV(acc[g], staging, stage, kFrag, false);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    const uint i = f / kFragsN, j = f % kFragsN;
    for (uint e = gl_SubgroupInvocationID; e < kFrag * kFrag; e += 32u) {
      const uint r = row0 + sub_m + i * kFrag + e / kFrag;
      const uint col = col0 + sub_n + j * kFrag + e % kFrag;
      if (r >= pc.m || col >= pc.n) continue;
      float v = pc.alpha * staging[stage + e];
      if (pc.has_c != 0u) v += pc.beta * LOAD(2, c, int(r) * pc.c_row_stride + int(col) * pc.c_col_stride);
      STORE(3, y, y_base + r * pc.n + col, apply_epilogue(pc.epilogue_ops, p, v));
    }
    // Every invocation has read the block before the next fragment overwrites it.
    subgroupBarrier();
  }
}
