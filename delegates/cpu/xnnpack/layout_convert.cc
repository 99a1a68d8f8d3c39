#include "delegates/cpu/xnnpack/layout_convert.h"

#include <algorithm>
#include <cstring>

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
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c) d[c * t.rows + r] = s[r * t.cols + c];
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

void nchw_to_nhwc(const float* src, float* dst, int64_t batch, int64_t channels, int64_t pixels, pthreadpool_t pool) {
  transpose_images(src, dst, batch, channels, pixels, pool);
}

void nhwc_to_nchw(const float* src, float* dst, int64_t batch, int64_t channels, int64_t pixels, pthreadpool_t pool) {
  transpose_images(src, dst, batch, pixels, channels, pool);
}

}  // namespace hetsched::cpu::xnnpack
