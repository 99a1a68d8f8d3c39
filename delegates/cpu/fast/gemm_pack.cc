// gemm.h's pack_panel: B's columns into the micro-kernels' panels. From
// B's rows it is a copy per row; from B's columns (B stored transposed: a
// linear layer's weights at init, attention's K read as K^T at every run,
// attention_plan.h) each panel is a transpose, done in 8 x 8 blocks of
// AVX registers where the CPU has AVX2: element by element it made
// BERT-base's Q.K^T 0.25 -> 0.40 ms a layer at seq 128 (one thread),
// more than the copy of K^T it replaced.
#include <algorithm>

#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/vector_math.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HETSCHED_FAST_X86 1
#endif

namespace hetsched::cpu::fast {

namespace {

#ifdef HETSCHED_FAST_X86
// Rows [p0, p0 + 8) of columns [j, j + 8) of the panel from B's columns
// (column j + c at src + c * ldb, its rows contiguous), times `scale`.
HETSCHED_AVX2 void transpose8x8(const float* src, int64_t ldb, float* dst, __m256 scale) {
  const __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + ldb), r2 = _mm256_loadu_ps(src + 2 * ldb),
               r3 = _mm256_loadu_ps(src + 3 * ldb), r4 = _mm256_loadu_ps(src + 4 * ldb),
               r5 = _mm256_loadu_ps(src + 5 * ldb), r6 = _mm256_loadu_ps(src + 6 * ldb),
               r7 = _mm256_loadu_ps(src + 7 * ldb);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(dst + 0 * kPanel, _mm256_mul_ps(scale, _mm256_permute2f128_ps(u0, u4, 0x20)));
  _mm256_storeu_ps(dst + 1 * kPanel, _mm256_mul_ps(scale, _mm256_permute2f128_ps(u1, u5, 0x20)));
  _mm256_storeu_ps(dst + 2 * kPanel, _mm256_mul_ps(scale, _mm256_permute2f128_ps(u2, u6, 0x20)));
  _mm256_storeu_ps(dst + 3 * kPanel, _mm256_mul_ps(scale, _mm256_permute2f128_ps(u3, u7, 0x20)));
  _mm256_storeu_ps(dst + 4 * kPanel, _mm256_mul_ps(scale, _mm256_permute2f128_ps(u0, u4, 0x31)));
  _mm256_storeu_ps(dst + 5 * kPanel, _mm256_mul_ps(scale, _mm256_permute2f128_ps(u1, u5, 0x31)));
  _mm256_storeu_ps(dst + 6 * kPanel, _mm256_mul_ps(scale, _mm256_permute2f128_ps(u2, u6, 0x31)));
  _mm256_storeu_ps(dst + 7 * kPanel, _mm256_mul_ps(scale, _mm256_permute2f128_ps(u3, u7, 0x31)));
}

// The whole 8 x 8 blocks of a panel of `width` columns from B's columns;
// returns how many rows (a multiple of 8) it packed.
HETSCHED_AVX2 int64_t pack_columns_avx2(int64_t k, const float* b, int64_t ldb, int64_t width, float* panel,
                                        float scale) {
  const int64_t rows = k / 8 * 8;
  const __m256 s = _mm256_set1_ps(scale);
  for (int64_t j = 0; j + 8 <= width; j += 8)
    for (int64_t p = 0; p < rows; p += 8) transpose8x8(b + j * ldb + p, ldb, panel + p * kPanel + j, s);
  return rows;
}
#endif

}  // namespace

void pack_panel(int64_t k, int64_t n, const float* b, int64_t ldb, bool trans_b, int64_t j0, float* panel,
                float scale) {
  const int64_t width = std::min(kPanel, n - j0);
  if (trans_b) {
    // Columns [0, whole) and rows [0, rows) in 8 x 8 blocks, the rest one
    // by one.
    int64_t rows = 0, whole = 0;
#ifdef HETSCHED_FAST_X86
    if (cpu_has_avx2_fma()) {
      rows = pack_columns_avx2(k, b + j0 * ldb, ldb, width, panel, scale);
      whole = width / 8 * 8;
    }
#endif
    for (int64_t j = 0; j < width; ++j) {
      const float* src = b + (j0 + j) * ldb;
      for (int64_t p = j < whole ? rows : 0; p < k; ++p) panel[p * kPanel + j] = src[p] * scale;
    }
  } else {
    for (int64_t p = 0; p < k; ++p) {
      const float* src = b + p * ldb + j0;
      float* dst = panel + p * kPanel;
      if (scale == 1.f)
        std::copy(src, src + width, dst);
      else
        for (int64_t j = 0; j < width; ++j) dst[j] = src[j] * scale;
    }
  }
  if (width < kPanel)
    for (int64_t p = 0; p < k; ++p) std::fill(panel + p * kPanel + width, panel + (p + 1) * kPanel, 0.f);
}

}  // namespace hetsched::cpu::fast
