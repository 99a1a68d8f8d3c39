// The f32 GEMM under the fast kernels (fast_ops.h): C = A . B for the small
// activation-by-activation products of attention (Q.K^T, P.V), which this
// XNNPACK snapshot cannot run (it has no batch matrix multiply and wants
// static weights).
//
// B is packed into panels of kPanel columns (k rows of kPanel floats, the
// last panel zero-padded); one call then computes every row of C for one
// panel, so a caller parallelises over panels (and batches) and packs each
// panel once. The micro-kernel is AVX-512 or AVX2+FMA where the CPU has it
// (chosen at run time; the build targets baseline x86-64), plain loops
// otherwise.
#pragma once

#include <cstdint>

namespace hetsched::cpu::fast {

inline constexpr int64_t kPanel = 16;

// Packs columns [j0, j0 + kPanel) of B (k x n) into `panel` (k * kPanel
// floats, 32-byte aligned). B is row-major with row stride `ldb`, or, with
// `trans_b`, stored as its transpose (n x k, row stride `ldb`).
void pack_panel(int64_t k, int64_t n, const float* b, int64_t ldb, bool trans_b, int64_t j0, float* panel);

// C[i][j0 + j] = sum_p A[i][p] * panel[p][j] for i < m, j < min(kPanel, n - j0),
// times `alpha`. A and C are row-major with strides lda and ldc; `c` points at
// column j0 of C's first row.
void gemm_panel(int64_t m, int64_t k, int64_t columns, const float* a, int64_t lda, const float* panel, float alpha,
                float* c, int64_t ldc);

// The micro-kernel gemm_panel runs on this CPU: "avx512f", "avx2" or "plain".
const char* gemm_isa();

}  // namespace hetsched::cpu::fast
