#include "delegates/cpu/fast/gemm_split.h"

#include <algorithm>

#include "delegates/cpu/fast/gemm.h"

namespace hetsched::cpu::fast {

namespace {

constexpr int64_t kRowTile = 12;  // a multiple of the AVX-512 micro-kernels' rows (6 and 12)
// A task's band of A (rows x k floats) is read once per column block, so
// it should stay in L2 (1 MiB on the development machine's cores). Up to
// kWholeBytes, one band of every row: the weights, often read from memory
// (a network's are MBs, each conv's read once per run), then stream once.
constexpr int64_t kBandBytes = 192 << 10;
constexpr int64_t kWholeBytes = 512 << 10;
constexpr int64_t kTasksPerThread = 4;

}  // namespace

GemmSplit split_gemm(int64_t m, int64_t k, int64_t n, int64_t lda, int64_t ldc, int threads) {
  GemmSplit s{m, k, n, lda, ldc};
  s.width = kBlockColumns;
  s.blocks = ceil_div(n, s.width);
  const int64_t row_bytes = k * static_cast<int64_t>(sizeof(float));
  // More columns than rows (a conv on a 7x7 or 14x14 map, a linear layer
  // on a few tokens): the weights outweigh A, and every band of rows
  // streams all of them, so the band starts as every row (ResNet-50's
  // 512-channel 3x3 at 7x7, K 4608, in 12-row bands read its 9.4 MB of
  // weights five times; its last stage's shapes took 0.88-0.97x the 12-row
  // bands' time on one Xeon thread). The threads still get 4 tasks each, narrower bands where
  // the columns run out: at 16 threads one run of columns per thread was
  // slower on the Xeon (the runs' speeds differ, and no task is left to
  // even them out).
  const bool weights_outweigh_a = n > m;
  s.band = m * row_bytes <= kWholeBytes || weights_outweigh_a
               ? m
               : std::max<int64_t>(kRowTile, kBandBytes / row_bytes / kRowTile * kRowTile);
  s.band = std::min(s.band, m);
  s.run = s.blocks;
  const int64_t want = threads > 1 ? kTasksPerThread * threads : 1;
  // Narrower runs of columns first (each task keeps its band), then
  // narrower bands, down to one micro-kernel tile.
  while (ceil_div(m, s.band) * ceil_div(s.blocks, s.run) < want && s.run > 1) s.run = ceil_div(s.run, 2);
  // Where the weights outweigh A, blocks of half the width (the 12 x 32
  // micro-kernel's) before narrower bands: a band streams all of its
  // columns' weights, a narrower block only its own. EfficientNetV2-S's
  // 7x7 projections (1536 -> 256 channels, 49 rows) at 2 threads had made
  // bands of 24, 24 and 1 rows, each reading 1.5 MB of weights: 0.28 ms
  // at 1 thread, 0.22 at 2; in 32-column blocks, one band, 0.12-0.13 warm
  // (bench/pointwise_bench).
  if (weights_outweigh_a && ceil_div(m, s.band) * s.blocks < want && n > kBlockColumns / 2) {
    s.width = kBlockColumns / 2;
    s.blocks = ceil_div(n, s.width);
    s.run = 1;
  }
  while (ceil_div(m, s.band) * ceil_div(s.blocks, s.run) < want && s.band > kRowTile)
    s.band = std::max(kRowTile, ceil_div(s.band / 2, kRowTile) * kRowTile);
  s.row_tasks = ceil_div(m, s.band);
  // Bands of near-equal height, not whole tiles and a remainder (49 rows
  // in bands of 12: four of 12 and one of 1, which streams its columns'
  // weights for one row).
  s.band = ceil_div(m, s.row_tasks);
  s.column_tasks = ceil_div(s.blocks, s.run);
  return s;
}

}  // namespace hetsched::cpu::fast
