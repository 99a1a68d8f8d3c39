// The f32 GEMM under the fast kernels (fast_op.h): C = A . B (+ bias per
// column, + a residual of C's shape, clamped), for attention's products of two
// run-time operands (Q.K^T, P.V), which this XNNPACK snapshot cannot run,
// and for a transformer's linear layers, where it runs 1.4x XNNPACK's
// AVX-512 kernel (FF 64x128x512: 32 us against 44), and for 1x1 convs
// (pointwise_conv.cc).
//
// B is packed into panels of kPanel columns (k rows of kPanel floats, the
// last panel zero-padded), consecutive in memory. One gemm_block call
// computes every row of C for up to kBlockColumns columns (four panels), so
// a caller parallelises over column blocks (and batches) and packs each
// panel once. The micro-kernels are AVX-512 (6 rows x 64 columns, or 12 x
// 32 for a few rows of great depth and for blocks of at most 32 columns: 24
// accumulators, so the two FMA pipes never wait on a sum; fewer panels for a
// last block of fewer columns) or
// AVX2+FMA (6 x 16) where the CPU has them (chosen at run time; the build
// targets baseline x86-64), plain loops otherwise. One thread on the development
// machine's EPYC (bench/gemm_bench): ~250 GFLOP/s with AVX-512, ~130 with
// AVX2 (each about its FMA units' peak) at 128x768x3072 and the like.
#pragma once

#include <cstdint>
#include <limits>

namespace hetsched::cpu::fast {

inline constexpr int64_t kPanel = 16;
inline constexpr int64_t kBlockPanels = 4;
inline constexpr int64_t kBlockColumns = kBlockPanels * kPanel;

// Packs columns [j0, j0 + kPanel) of B (k x n) into `panel` (k * kPanel
// floats, 64-byte aligned), times `scale` (attention's scale folded into
// Q.K^T: attention_plan.h). B is row-major with row stride `ldb`, or, with
// `trans_b`, stored as its transpose (n x k, row stride `ldb`).
void pack_panel(int64_t k, int64_t n, const float* b, int64_t ldb, bool trans_b, int64_t j0, float* panel,
                float scale = 1.f);

// What gemm_block adds to A . B, both optional: bias[j] per column (bias
// points at the block's first column) and residual[i][j] (row stride ldc,
// pointing at the block's first column of row 0).
struct Epilogue {
  const float* bias = nullptr;
  const float* residual = nullptr;
  // Not an addition: packed panels (as `panels`) that the caller runs next,
  // prefetched into L2 while the block's first row tile streams its own
  // (while its last part does, where the micro-kernels' set is narrower
  // than the block; each earlier part prefetches the next part).
  // A linear layer's weights are read once per run, often from memory
  // (BERT-base: 28 MB a layer); without this, each block's first tile
  // waits on them.
  const float* next_panels = nullptr;
  // Then clamped to [min, max] (a 1x1 conv's fused Relu or Clip; NaN
  // passes through). The defaults leave the sums as they are.
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  // Set by gemm_block, not by callers: the kernel prefetches one row of
  // next_panels (one cache line per panel) every `prefetch_every` steps of
  // k, so that each of a block's row tiles fetches its share of the next
  // block's panels.
  int64_t prefetch_every = 1;
  // The residual's row stride: -1 for ldc, 0 for one row added to every row
  // (an attention mask broadcast over the queries: attention_plan.h).
  int64_t residual_ld = -1;
  // Set by gemm_block, not by callers: floats from one packed panel to the
  // next (0: k * kPanel), where a call covers a chunk of the depth.
  int64_t panel_stride = 0;
};

inline int64_t residual_stride(const Epilogue& e, int64_t ldc) { return e.residual_ld < 0 ? ldc : e.residual_ld; }

// Where A's rows are: element (i, s * L + q) of A, for s < segments and
// q < L = k / segments, is at a[i * lda + s * segment_stride + q]. One
// segment is a plain row-major A. More let a KxK conv read its windows from
// a (padded) NHWC input in place instead of gathering them: a segment per
// kernel row, each kernel_w x Cin consecutive floats, with lda = stride x
// Cin between the output pixels of one output row (pointwise_conv.cc's
// tap-by-tap path).
//
// With `row_offsets`, row i starts at a + row_offsets[i] instead of
// a + i * lda (lda unused): a conv's output pixels of several output rows
// in one call (pointwise_conv.cc's windows read in place), so that a 7x7
// map's 49 pixels make row tiles of 10 rather
// than seven calls of 7 rows (and a 1x1 stride-2 conv on 14x14 -> 7x7,
// 1024 -> 2048 channels, 4- and 3-row tiles: 2.1 ms against 1.5 gathered).
struct ARows {
  const float* a = nullptr;
  int64_t lda = 0;
  int64_t segments = 1;  // divides k
  int64_t segment_stride = 0;
  const int64_t* row_offsets = nullptr;

  // Where row i (segment 0) starts.
  const float* row(int64_t i) const { return a + (row_offsets ? row_offsets[i] : i * lda); }
  // The rows from row i on.
  ARows from(int64_t i) const {
    ARows r = *this;
    if (row_offsets)
      r.row_offsets += i;
    else
      r.a += i * lda;
    return r;
  }
};

// C[i][j] = sum_p A[i][p] * B[p][j] (+ epilogue) for i < m and j < columns
// (<= kBlockColumns), B being `panels`: the block's ceil(columns / kPanel)
// consecutive packed panels (no kernel reads a panel past those). A and C
// are row-major with strides lda and ldc; `c` points at the block's first
// column of row 0.
void gemm_block(int64_t m, int64_t k, int64_t columns, const float* a, int64_t lda, const float* panels,
                const Epilogue& epilogue, float* c, int64_t ldc);
// The same with A's rows as `a` describes.
void gemm_block(int64_t m, int64_t k, int64_t columns, const ARows& a, const float* panels, const Epilogue& epilogue,
                float* c, int64_t ldc);

// gemm_block over a slice of deeper panels: B's k rows start at `panels`
// and each panel is `panel_stride` floats after the one before (rows [k0,
// k0 + k) of panels packed for a depth d: panels + k0 * kPanel, stride
// d * kPanel). A conv run tap by tap takes one tap's Cin rows so.
void gemm_block_slice(int64_t m, int64_t k, int64_t columns, const ARows& a, const float* panels, int64_t panel_stride,
                      const Epilogue& epilogue, float* c, int64_t ldc);

// The column blocks a caller splits C's n columns into, when `tasks_per_block`
// tasks share each block (batches, row bands) and `threads` threads run
// them: kBlockColumns, or half that where the wider blocks would give the
// threads fewer than four tasks each (16 threads on a 768-column layer).
// gemm_block runs a block of at most half that width on 12 x 32 tiles.
int64_t block_columns(int64_t n, int64_t tasks_per_block, int threads);

// The micro-kernel gemm_block runs on this CPU: "avx512f", "avx2" or "plain".
const char* gemm_isa();

}  // namespace hetsched::cpu::fast
