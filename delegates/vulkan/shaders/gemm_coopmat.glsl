#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
// gemm.comp's batched GEMM (same bindings and push constants: GemmPush in
// delegates/vulkan/kernel_params.h) with the multiplies on the tensor
// cores: MatMul and Gemm of run-time operands at `precision: fp16`.
//
// A workgroup of kInvocations invocations computes a kTileM x kTileN tile of Y,
// walking K in steps of 32. Each step's A and B tiles are loaded from the
// f32 buffers eight consecutive elements per invocation (two vec4 loads
// when the operand is contiguous and 16-byte aligned along that dim: kVecA,
// kVecB), rounded to f16 and stored as one uvec4 into shared memory
// (double-buffered: the next
// step's loads are in flight during this step's products, one barrier per
// step), and multiplied there by VK_NV_cooperative_matrix subgroup products
// (f16 x f16 + f32 -> f32): only the operands lose precision. Subgroups form
// a kWarpsM x kWarpsN grid over the tile; each holds kFragsM x kFragsN
// accumulator fragments of the device's reported shape. At the end each
// subgroup stages one fragment at a time in shared memory and its
// invocations apply alpha, beta * C and the epilogue from there.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

// 256, 512 or 1024 invocations (GEMM_INVOCATIONS, set by the including
// gemm_coopmat*.comp): as many subgroups as keep two accumulator fragments
// each (delegates/vulkan/lowering.cc's gemm_coopmat_specialization). A fixed
// size, not a specialisation constant: with local_size_x_id the H100's
// driver ran the 64 x 64 tile a third slower (4096^3: 29.5 against 44
// TFLOP/s), likely budgeting registers for 1024 invocations.
layout(local_size_x = GEMM_INVOCATIONS) in;
const uint kInvocations = GEMM_INVOCATIONS;

layout(constant_id = 0) const uint kTileM = 128u;  // 64 or 128
layout(constant_id = 1) const uint kTileN = 128u;  // 64 or 128
layout(constant_id = 2) const bool kVecA = false;  // A rows contiguous along K, 16-byte aligned, K % 4 == 0
layout(constant_id = 3) const bool kVecB = false;  // B rows contiguous along N, 16-byte aligned, N % 4 == 0
layout(constant_id = 4) const uint kWarpsM = 2u;   // kWarpsM * kWarpsN = kInvocations / subgroup size
layout(constant_id = 5) const uint kWarpsN = 4u;
layout(constant_id = 6) const uint kFragM = 16u;
layout(constant_id = 7) const uint kFragN = 16u;
layout(constant_id = 8) const uint kFragK = 16u;  // divides 32

#include "gemm_coopmat_io.glsl"

const uint kTileK = 32u;
// Each invocation loads groups of eight consecutive elements (two vec4s)
// and stores them as one uvec4 of eight halves: A's octet q is row q / 4, k
// 8 * (q % 4); B's octet q is k q / (kTileN / 8), column 8 * (q % (kTileN / 8)).
const uint kTotalA = kTileM * kTileK / 8u;
const uint kTotalB = kTileK * kTileN / 8u;
const uint kOctetsA = (kTotalA + kInvocations - 1u) / kInvocations;
const uint kOctetsB = (kTotalB + kInvocations - 1u) / kInvocations;
const uint kFragsM = kTileM / kWarpsM / kFragM;
const uint kFragsN = kTileN / kWarpsN / kFragN;
const uint kSubgroups = kWarpsM * kWarpsN;
const uint kFragSize = kFragM * kFragN;
// Shared tiles hold uvec4s (eight halves); fragment loads count offsets and
// strides in them. Rows are one uvec4 (16 bytes) longer than a tile row, so
// the rows a fragment load reads start on different banks.
const uint kRowA = kTileK / 8u + 1u;
const uint kRowB = kTileN / 8u + 1u;
// A as [buffer][row][k] (a row-major M x K fragment source), B as
// [buffer][k][column] (row-major K x N).
shared uvec4 a_tile[2 * kTileM * kRowA];
shared uvec4 b_tile[2 * kTileK * kRowB];
const uint kStagers = kSubgroups < 8u ? kSubgroups : 8u;
shared float staging[kStagers * kFragSize];

vec4 a_next[2 * kOctetsA];
vec4 b_next[2 * kOctetsB];

// Step k0's tiles into registers: consecutive invocations read consecutive
// memory when the operand is contiguous.
void load_step(uint k0) {
  [[unroll]] for (uint s = 0u; s < kOctetsA; ++s) {
    const uint q = tid + s * kInvocations;
    if (q >= kTotalA) break;
    const uint r = row0 + q / 4u;
    const uint kk = k0 + 8u * (q % 4u);
    a_next[2u * s] = a_quad(r, kk);
    a_next[2u * s + 1u] = a_quad(r, kk + 4u);
  }
  const uint octets_per_row = kTileN / 8u;
  [[unroll]] for (uint s = 0u; s < kOctetsB; ++s) {
    const uint q = tid + s * kInvocations;
    if (q >= kTotalB) break;
    const uint kk = k0 + q / octets_per_row;
    const uint col = col0 + 8u * (q % octets_per_row);
    b_next[2u * s] = b_quad(kk, col);
    b_next[2u * s + 1u] = b_quad(kk, col + 4u);
  }
}

// The registers of load_step, rounded to f16, into buffer `buf`.
void store_step(uint buf) {
  [[unroll]] for (uint s = 0u; s < kOctetsA; ++s) {
    const uint q = tid + s * kInvocations;
    if (q >= kTotalA) break;
    a_tile[(buf * kTileM + q / 4u) * kRowA + q % 4u] = halves(a_next[2u * s], a_next[2u * s + 1u]);
  }
  const uint octets_per_row = kTileN / 8u;
  [[unroll]] for (uint s = 0u; s < kOctetsB; ++s) {
    const uint q = tid + s * kInvocations;
    if (q >= kTotalB) break;
    b_tile[(buf * kTileK + q / octets_per_row) * kRowB + q % octets_per_row] = halves(b_next[2u * s], b_next[2u * s + 1u]);
  }
}

void main() {
  tid = gl_LocalInvocationIndex;
  row0 = gl_WorkGroupID.y * kTileM;
  col0 = gl_WorkGroupID.x * kTileN;
  const uint z = gl_WorkGroupID.z;
  set_batch_bases(z);

  const uint warp = gl_SubgroupID;
  const uint sub_m = (warp % kWarpsM) * kFragsM * kFragM;
  const uint sub_n = (warp / kWarpsM) * kFragsN * kFragN;

  fcoopmatNV<32, gl_ScopeSubgroup, kFragM, kFragN> acc[kFragsM * kFragsN];
  [[unroll]] for (uint i = 0u; i < kFragsM * kFragsN; ++i) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, kFragM, kFragN>(0.0);

  load_step(0u);
  store_step(0u);
  barrier();
  uint buf = 0u;
  for (uint k0 = 0u; k0 < pc.k; k0 += kTileK) {
    const bool more = k0 + kTileK < pc.k;
    if (more) load_step(k0 + kTileK);
    [[unroll]] for (uint kk = 0u; kk < kTileK; kk += kFragK) {
      fcoopmatNV<16, gl_ScopeSubgroup, kFragM, kFragK> fa[kFragsM];
      fcoopmatNV<16, gl_ScopeSubgroup, kFragK, kFragN> fb[kFragsN];
      // Offsets in uvec4s: k and columns in eighths.
      [[unroll]] for (uint i = 0u; i < kFragsM; ++i)
        coopMatLoadNV(fa[i], a_tile, (buf * kTileM + sub_m + i * kFragM) * kRowA + kk / 8u, kRowA, false);
      [[unroll]] for (uint j = 0u; j < kFragsN; ++j)
        coopMatLoadNV(fb[j], b_tile, (buf * kTileK + kk) * kRowB + (sub_n + j * kFragN) / 8u, kRowB, false);
      [[unroll]] for (uint i = 0u; i < kFragsM; ++i)
        [[unroll]] for (uint j = 0u; j < kFragsN; ++j) acc[i * kFragsN + j] = coopMatMulAddNV(fa[i], fb[j], acc[i * kFragsN + j]);
    }
    if (more) store_step(buf ^ 1u);
    barrier();
    buf ^= 1u;
  }

  const uint y_base = z * pc.m * pc.n;
  const vec4 p = vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3);
  // At most eight subgroups stage at once (a block each), so shared memory
  // stays within 48 KiB at 1024 invocations; the others wait their round.
  const uint stage = (warp % kStagers) * kFragSize;
  for (uint round = 0u; round < kSubgroups / kStagers; ++round) {
    barrier();
    if (warp / kStagers != round) continue;
    [[unroll]] for (uint i = 0u; i < kFragsM; ++i) {
      [[unroll]] for (uint j = 0u; j < kFragsN; ++j) {
        coopMatStoreNV(acc[i * kFragsN + j], staging, stage, kFragN, false);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        for (uint e = gl_SubgroupInvocationID; e < kFragSize; e += gl_SubgroupSize) {
          const uint r = row0 + sub_m + i * kFragM + e / kFragN;
          const uint col = col0 + sub_n + j * kFragN + e % kFragN;
          if (r >= pc.m || col >= pc.n) continue;
          float v = pc.alpha * staging[stage + e];
          if (pc.has_c != 0u) v += pc.beta * LOAD(2, c, int(r) * pc.c_row_stride + int(col) * pc.c_col_stride);
          STORE(3, y, y_base + r * pc.n + col, apply_epilogue(pc.epilogue_ops, p, v));
        }
        // Every invocation has read the block before the next fragment overwrites it.
        subgroupBarrier();
      }
    }
  }
}
