#include "delegates/cpu/xnnpack/layout_convert.h"

#include <algorithm>
#include <cstring>

#ifdef __SSE2__
#include <xmmintrin.h>
#endif

#include "delegates/cpu/fast/task_pool.h"
#include "delegates/cpu/xnnpack/threadpool.h"

namespace hetsched::cpu::xnnpack {

namespace {

// 32x32 floats (4 KiB) of source and of destination stay in L1 while a
// tile is transposed.
constexpr int64_t kTile = 32;

// dst[col][row] = src[row][col] for a rows x cols matrix per image, one
// task per 32x32 tile.
struct Transpose {
  const float* src;
  float* dst;
  int64_t rows, cols;
  int64_t row_tiles, col_tiles;

  static void tile(void* context, size_t index) {
    const Transpose& t = *static_cast<const Transpose*>(context);
    const int64_t i = static_cast<int64_t>(index);
    const int64_t image = i / (t.row_tiles * t.col_tiles);
    const int64_t r0 = i / t.col_tiles % t.row_tiles * kTile;
    const int64_t c0 = i % t.col_tiles * kTile;
    const float* s = t.src + image * t.rows * t.cols;
    float* d = t.dst + image * t.rows * t.cols;
    const int64_t r1 = std::min(t.rows, r0 + kTile), c1 = std::min(t.cols, c0 + kTile);
#ifdef __SSE2__
    // 4x4 blocks through registers: the scalar loop is a strided load or
    // store per element and made the conversions a quarter of det's run.
    const int64_t r4 = r0 + (r1 - r0) / 4 * 4, c4 = c0 + (c1 - c0) / 4 * 4;
    for (int64_t r = r0; r < r4; r += 4)
      for (int64_t c = c0; c < c4; c += 4) {
        const float* in = s + r * t.cols + c;
        __m128 a = _mm_loadu_ps(in), b = _mm_loadu_ps(in + t.cols), e = _mm_loadu_ps(in + 2 * t.cols),
               f = _mm_loadu_ps(in + 3 * t.cols);
        _MM_TRANSPOSE4_PS(a, b, e, f);
        float* out = d + c * t.rows + r;
        _mm_storeu_ps(out, a);
        _mm_storeu_ps(out + t.rows, b);
        _mm_storeu_ps(out + 2 * t.rows, e);
        _mm_storeu_ps(out + 3 * t.rows, f);
      }
    scalar_part(s, d, t.rows, t.cols, r0, r4, c4, c1);
    scalar_part(s, d, t.rows, t.cols, r4, r1, c0, c1);
#else
    scalar_part(s, d, t.rows, t.cols, r0, r1, c0, c1);
#endif
  }

  static void scalar_part(const float* s, float* d, int64_t rows, int64_t cols, int64_t r0, int64_t r1, int64_t c0,
                          int64_t c1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) d[c * rows + r] = s[r * cols + c];
  }
};

void transpose_images(const float* src, float* dst, int64_t batch, int64_t rows, int64_t cols, pthreadpool_t pool) {
  // One row or one column: the two orders coincide.
  if (rows == 1 || cols == 1) {
    std::memcpy(dst, src, static_cast<size_t>(batch * rows * cols) * sizeof(float));
    return;
  }
  Transpose t{src, dst, rows, cols, (rows + kTile - 1) / kTile, (cols + kTile - 1) / kTile};
  const size_t tiles = static_cast<size_t>(batch * t.row_tiles * t.col_tiles);
  if (pool) {
    pthreadpool_parallelize_1d(pool, &Transpose::tile, &t, tiles, 0);
    return;
  }
  for (size_t i = 0; i < tiles; ++i) Transpose::tile(&t, i);
}

}  // namespace

void parallel_copy(const void* src, void* dst, size_t bytes, pthreadpool_t pool) {
  fast::parallel_copy(src, dst, bytes, thread_pool_of(pool));
}

void nchw_to_nhwc(const float* src, float* dst, int64_t batch, int64_t channels, int64_t pixels, pthreadpool_t pool) {
  transpose_images(src, dst, batch, channels, pixels, pool);
}

void nhwc_to_nchw(const float* src, float* dst, int64_t batch, int64_t channels, int64_t pixels, pthreadpool_t pool) {
  transpose_images(src, dst, batch, pixels, channels, pool);
}

}  // namespace hetsched::cpu::xnnpack
