#include "delegates/cpu/fast/gemm.h"

#include "delegates/cpu/fast/vector_math.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HETSCHED_FAST_X86 1
#endif

namespace hetsched::cpu::fast {

namespace {

void store_columns(const float* row, float* c, int64_t columns) { std::copy(row, row + columns, c); }

// The portable micro-kernel; GCC vectorises the j loop.
template <int64_t Rows>
void kernel_plain(int64_t k, const float* a, int64_t lda, const float* panel, float alpha, float* c, int64_t ldc,
                  int64_t columns) {
  float acc[Rows][kPanel] = {};
  for (int64_t p = 0; p < k; ++p) {
    const float* b = panel + p * kPanel;
    for (int64_t r = 0; r < Rows; ++r) {
      const float ar = a[r * lda + p];
      for (int64_t j = 0; j < kPanel; ++j) acc[r][j] += ar * b[j];
    }
  }
  for (int64_t r = 0; r < Rows; ++r) {
    for (int64_t j = 0; j < kPanel; ++j) acc[r][j] *= alpha;
    store_columns(acc[r], c + r * ldc, columns);
  }
}

#ifdef HETSCHED_FAST_X86
// 6 rows x 2 vectors of 8: 12 accumulators, two B vectors and one broadcast
// A fit AVX2's 16 registers.
template <int64_t Rows>
HETSCHED_AVX2 void kernel_avx2(int64_t k, const float* a, int64_t lda, const float* panel,
                                                     float alpha, float* c, int64_t ldc, int64_t columns) {
  __m256 lo[Rows], hi[Rows];
  for (int64_t r = 0; r < Rows; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const __m256 b0 = _mm256_load_ps(panel + p * kPanel);
    const __m256 b1 = _mm256_load_ps(panel + p * kPanel + 8);
    for (int64_t r = 0; r < Rows; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a + r * lda + p);
      lo[r] = _mm256_fmadd_ps(ar, b0, lo[r]);
      hi[r] = _mm256_fmadd_ps(ar, b1, hi[r]);
    }
  }
  const __m256 scale = _mm256_set1_ps(alpha);
  for (int64_t r = 0; r < Rows; ++r) {
    lo[r] = _mm256_mul_ps(lo[r], scale);
    hi[r] = _mm256_mul_ps(hi[r], scale);
    float* cr = c + r * ldc;
    if (columns == kPanel) {
      _mm256_storeu_ps(cr, lo[r]);
      _mm256_storeu_ps(cr + 8, hi[r]);
    } else {
      alignas(32) float row[kPanel];
      _mm256_store_ps(row, lo[r]);
      _mm256_store_ps(row + 8, hi[r]);
      store_columns(row, cr, columns);
    }
  }
}
#endif

#ifdef HETSCHED_FAST_X86
// 8 rows x one 16-float vector: 8 independent accumulators cover the two
// FMA pipes' latency, and A's element is broadcast from memory into the FMA.
template <int64_t Rows>
HETSCHED_AVX512 void kernel_avx512(int64_t k, const float* a, int64_t lda, const float* panel, float alpha, float* c,
                                   int64_t ldc, int64_t columns) {
  __m512 acc[Rows];
  for (int64_t r = 0; r < Rows; ++r) acc[r] = _mm512_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const __m512 b = _mm512_load_ps(panel + p * kPanel);
    for (int64_t r = 0; r < Rows; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a[r * lda + p]), b, acc[r]);
  }
  const __m512 scale = _mm512_set1_ps(alpha);
  const __mmask16 mask = static_cast<__mmask16>((1u << columns) - 1);
  for (int64_t r = 0; r < Rows; ++r) _mm512_mask_storeu_ps(c + r * ldc, mask, _mm512_mul_ps(acc[r], scale));
}
#endif

using Kernel = void (*)(int64_t, const float*, int64_t, const float*, float, float*, int64_t, int64_t);

// One ISA's micro-kernels, for 1..rows rows (kernels[r - 1]).
struct KernelSet {
  int64_t rows;
  Kernel kernels[8];
};

const KernelSet& chosen_kernels() {
  static const KernelSet plain{6, {kernel_plain<1>, kernel_plain<2>, kernel_plain<3>, kernel_plain<4>,
                                   kernel_plain<5>, kernel_plain<6>}};
#ifdef HETSCHED_FAST_X86
  static const KernelSet avx2{6, {kernel_avx2<1>, kernel_avx2<2>, kernel_avx2<3>, kernel_avx2<4>, kernel_avx2<5>,
                                  kernel_avx2<6>}};
  static const KernelSet avx512{8, {kernel_avx512<1>, kernel_avx512<2>, kernel_avx512<3>, kernel_avx512<4>,
                                    kernel_avx512<5>, kernel_avx512<6>, kernel_avx512<7>, kernel_avx512<8>}};
  if (cpu_has_avx512f()) return avx512;
  if (cpu_has_avx2_fma()) return avx2;
#endif
  return plain;
}

}  // namespace

const char* gemm_isa() { return cpu_has_avx512f() ? "avx512f" : cpu_has_avx2_fma() ? "avx2" : "plain"; }

void pack_panel(int64_t k, int64_t n, const float* b, int64_t ldb, bool trans_b, int64_t j0, float* panel) {
  const int64_t width = std::min(kPanel, n - j0);
  if (trans_b) {
    for (int64_t j = 0; j < width; ++j) {
      const float* src = b + (j0 + j) * ldb;
      for (int64_t p = 0; p < k; ++p) panel[p * kPanel + j] = src[p];
    }
  } else {
    for (int64_t p = 0; p < k; ++p) std::copy(b + p * ldb + j0, b + p * ldb + j0 + width, panel + p * kPanel);
  }
  if (width < kPanel)
    for (int64_t p = 0; p < k; ++p) std::fill(panel + p * kPanel + width, panel + (p + 1) * kPanel, 0.f);
}

void gemm_panel(int64_t m, int64_t k, int64_t columns, const float* a, int64_t lda, const float* panel, float alpha,
                float* c, int64_t ldc) {
  static const KernelSet& set = chosen_kernels();
  const int64_t rows = set.rows;
  int64_t i = 0;
  for (; i + rows <= m; i += rows) set.kernels[rows - 1](k, a + i * lda, lda, panel, alpha, c + i * ldc, ldc, columns);
  if (i < m) set.kernels[m - i - 1](k, a + i * lda, lda, panel, alpha, c + i * ldc, ldc, columns);
}

}  // namespace hetsched::cpu::fast
