// How a conv's GEMM on the fast kernels (pointwise_conv.cc) is cut into
// tasks: a band of rows (kept in L2) by a run of column blocks (gemm.h's
// kBlockColumns) each; more and narrower tasks only when the threads need
// them. Here, not in pointwise_conv.cc, because winograd_rule.cc's cost of
// the direct conv counts the bands: each streams all of its columns'
// weights.
#pragma once

#include <cstdint>

namespace hetsched::cpu::fast {

// A task goes block by block, each block over the whole band, prefetching
// the next block's panels into L2 while its first band computes (gemm.h's
// next_panels).
struct GemmSplit {
  int64_t m = 0, k = 0, n = 0, lda = 0, ldc = 0;
  int64_t width = 0;   // columns per block: kBlockColumns, or half that (below)
  int64_t blocks = 0;  // `width`-column blocks of C
  int64_t band = 0;    // rows per task
  int64_t run = 0;     // column blocks per task
  int64_t row_tasks = 0, column_tasks = 0;

  int64_t tasks() const { return row_tasks * column_tasks; }
  // C's columns rounded up to whole blocks: what packed panels and a bias
  // per column are sized to.
  int64_t padded_columns() const { return blocks * width; }
  double work() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// a / b rounded up: the tasks a split makes.
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// C = A . B, m x n of depth k (A's and C's row strides lda and ldc), for
// `threads` threads.
GemmSplit split_gemm(int64_t m, int64_t k, int64_t n, int64_t lda, int64_t ldc, int threads);

}  // namespace hetsched::cpu::fast
