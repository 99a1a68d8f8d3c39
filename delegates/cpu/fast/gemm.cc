#include "delegates/cpu/fast/gemm.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <utility>

#include "delegates/cpu/fast/vector_math.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HETSCHED_FAST_X86 1
#endif

namespace hetsched::cpu::fast {

namespace {

// Stores `row` (kPanel or kBlockColumns sums of one row of C) plus the
// epilogue into the first `columns` columns of c.
void store_row(const float* row, int64_t columns, const Epilogue& e, int64_t r, int64_t ldc, float* c) {
  float* out = c + r * ldc;
  const float* res = e.residual ? e.residual + r * residual_stride(e, ldc) : nullptr;
  for (int64_t j = 0; j < columns; ++j) {
    const float v = row[j] + (e.bias ? e.bias[j] : 0.f) + (res ? res[j] : 0.f);
    out[j] = v < e.min ? e.min : v > e.max ? e.max : v;
  }
}

// The portable micro-kernel over one panel; GCC vectorises the j loop.
template <int64_t Rows>
void kernel_plain(int64_t k, const ARows& a, const float* panel, const Epilogue& e, float* c, int64_t ldc,
                  int64_t columns) {
  float acc[Rows][kPanel] = {};
  const int64_t length = k / a.segments;
  for (int64_t s = 0; s < a.segments; ++s) {
    for (int64_t q = 0; q < length; ++q) {
      const float* b = panel + (s * length + q) * kPanel;
      for (int64_t r = 0; r < Rows; ++r) {
        const float ar = a.row(r)[s * a.segment_stride + q];
        for (int64_t j = 0; j < kPanel; ++j) acc[r][j] += ar * b[j];
      }
    }
  }
  for (int64_t r = 0; r < Rows; ++r) store_row(acc[r], columns, e, r, ldc, c);
}

#ifdef HETSCHED_FAST_X86
// The first `columns` (< 8) lanes, for AVX2's masked loads and stores.
HETSCHED_AVX2 inline __m256i lane_mask(int64_t columns) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(columns)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// sum (+ epilogue) into 8 columns of c, `mask` lanes of them when partial.
HETSCHED_AVX2 inline void store8(__m256 sum, const float* bias, const float* residual, __m256 lo, __m256 hi,
                                 float* c, bool full, __m256i mask) {
  if (full) {
    if (bias) sum = _mm256_add_ps(sum, _mm256_loadu_ps(bias));
    if (residual) sum = _mm256_add_ps(sum, _mm256_loadu_ps(residual));
    _mm256_storeu_ps(c, _mm256_min_ps(hi, _mm256_max_ps(lo, sum)));
  } else {
    if (bias) sum = _mm256_add_ps(sum, _mm256_maskload_ps(bias, mask));
    if (residual) sum = _mm256_add_ps(sum, _mm256_maskload_ps(residual, mask));
    _mm256_maskstore_ps(c, mask, _mm256_min_ps(hi, _mm256_max_ps(lo, sum)));
  }
}

// Row r's 16 sums (+ epilogue) into the first `columns` columns of C.
HETSCHED_AVX2 inline void store16(int64_t r, __m256 lo, __m256 hi, const Epilogue& e, float* c, int64_t ldc,
                                  int64_t columns) {
  const float* res = e.residual ? e.residual + r * residual_stride(e, ldc) : nullptr;
  // max(lo, x) and min(hi, x) return x when it is NaN.
  const __m256 lov = _mm256_set1_ps(e.min), hiv = _mm256_set1_ps(e.max);
  store8(lo, e.bias, res, lov, hiv, c + r * ldc, columns >= 8, lane_mask(columns));
  if (columns > 8)
    store8(hi, e.bias ? e.bias + 8 : nullptr, res ? res + 8 : nullptr, lov, hiv, c + r * ldc + 8, columns >= kPanel,
           lane_mask(columns - 8));
}

// 6 rows x 2 vectors of 8 over one panel: 12 accumulators, two B vectors
// and one broadcast A fit AVX2's 16 registers. The accumulators are named
// variables, not an array: with arrays, GCC kept them in memory as well and
// stored all 12 on every step of k (67 GFLOP/s on the development
// machine's EPYC; 2x that as written here).
template <int64_t Rows>
HETSCHED_AVX2 void kernel_avx2(int64_t k, const ARows& a, const float* panel, const Epilogue& e, float* c,
                               int64_t ldc, int64_t columns) {
  __m256 l0 = _mm256_setzero_ps(), h0 = l0, l1 = l0, h1 = l0, l2 = l0, h2 = l0, l3 = l0, h3 = l0, l4 = l0, h4 = l0,
         l5 = l0, h5 = l0;
  const int64_t length = k / a.segments;
#define HETSCHED_AVX2_ROW(i)                               \
  if constexpr (Rows > i) {                                \
    const __m256 ar = _mm256_broadcast_ss(a##i + q);       \
    l##i = _mm256_fmadd_ps(ar, b0, l##i);                  \
    h##i = _mm256_fmadd_ps(ar, b1, h##i);                  \
  }
  const float* next = e.next_panels;
  const int64_t every = next ? std::max<int64_t>(1, e.prefetch_every) : k;
  for (int64_t s = 0; s < a.segments; ++s) {
    // Rows past `Rows` read row 0 and are never stored (if constexpr).
    const int64_t at = s * a.segment_stride;
    const float* a0 = a.row(0) + at;
    const float* a1 = Rows > 1 ? a.row(1) + at : a0;
    const float* a2 = Rows > 2 ? a.row(2) + at : a0;
    const float* a3 = Rows > 3 ? a.row(3) + at : a0;
    const float* a4 = Rows > 4 ? a.row(4) + at : a0;
    const float* a5 = Rows > 5 ? a.row(5) + at : a0;
    const float* b = panel + s * length * kPanel;
    for (int64_t q = 0; q < length;) {
      if (next) {
        _mm_prefetch(reinterpret_cast<const char*>(next), _MM_HINT_T1);
        next += kPanel;
      }
      for (const int64_t end = std::min(length, q + every); q < end; ++q) {
        const __m256 b0 = _mm256_load_ps(b + q * kPanel);
        const __m256 b1 = _mm256_load_ps(b + q * kPanel + 8);
        HETSCHED_AVX2_ROW(0) HETSCHED_AVX2_ROW(1) HETSCHED_AVX2_ROW(2)
        HETSCHED_AVX2_ROW(3) HETSCHED_AVX2_ROW(4) HETSCHED_AVX2_ROW(5)
      }
    }
  }
#undef HETSCHED_AVX2_ROW
  store16(0, l0, h0, e, c, ldc, columns);
  if constexpr (Rows > 1) store16(1, l1, h1, e, c, ldc, columns);
  if constexpr (Rows > 2) store16(2, l2, h2, e, c, ldc, columns);
  if constexpr (Rows > 3) store16(3, l3, h3, e, c, ldc, columns);
  if constexpr (Rows > 4) store16(4, l4, h4, e, c, ldc, columns);
  if constexpr (Rows > 5) store16(5, l5, h5, e, c, ldc, columns);
}

// Rows x Panels panels of 16 columns, 24 accumulators at 12 x 2 and 6 x 4:
// enough to keep both FMA pipes busy through their latency, with A's
// element broadcast once for all panels. 6 x 4 loads 10 vectors for 24 FMAs
// where 12 x 2 loads 14, and ran 1.1-1.2x faster on the session-14 Xeon at
// depths up to ~1000; 12 x 2 reads B half as often, which wins on a few
// rows of great depth. `HETSCHED_GEMM_TILE=12x32|6x64 build/bench/gemm_bench
// 3136x64x256 49x4608x512` (a 1x1 conv of 64 -> 256 channels at 56x56; a
// 3x3 conv of 512 channels at 7x7), 6 x 4 against 12 x 2: 144-148 against
// 128-130 GFLOP/s, and 129-131 against 137-141.
// Fewer Panels than the set's for a last block of fewer columns: a 1x1 conv
// to 40 or 112 channels would otherwise spend FMAs on padding.
template <int64_t Rows, int64_t Panels>
HETSCHED_AVX512 void kernel_avx512(int64_t k, const ARows& a, const float* panels, const Epilogue& e, float* c,
                                   int64_t ldc, int64_t columns) {
  __m512 acc[Rows][Panels];
  for (int64_t r = 0; r < Rows; ++r)
    for (int64_t q = 0; q < Panels; ++q) acc[r][q] = _mm512_setzero_ps();
  const float* next = e.next_panels;
  // One prefetch (a line of each next panel) per run of prefetch_every
  // steps, outside the run's loop, which has no branch of its own.
  const int64_t every = next ? std::max<int64_t>(1, e.prefetch_every) : k;
  const int64_t length = k / a.segments, stride = e.panel_stride > 0 ? e.panel_stride : k * kPanel;
  for (int64_t s = 0; s < a.segments; ++s) {
    const float* as[Rows];
    for (int64_t r = 0; r < Rows; ++r) as[r] = a.row(r) + s * a.segment_stride;
    const float* p0 = panels + s * length * kPanel;
    for (int64_t q = 0; q < length;) {
      if (next) {
        for (int64_t j = 0; j < Panels; ++j) _mm_prefetch(reinterpret_cast<const char*>(next + j * stride), _MM_HINT_T1);
        next += kPanel;
      }
      for (const int64_t end = std::min(length, q + every); q < end; ++q) {
        __m512 b[Panels];
        for (int64_t j = 0; j < Panels; ++j) b[j] = _mm512_load_ps(p0 + j * stride + q * kPanel);
        for (int64_t r = 0; r < Rows; ++r) {
          const __m512 ar = _mm512_set1_ps(as[r][q]);
          for (int64_t j = 0; j < Panels; ++j) acc[r][j] = _mm512_fmadd_ps(ar, b[j], acc[r][j]);
        }
      }
    }
  }
  __mmask16 mask[Panels];
  for (int64_t j = 0; j < Panels; ++j) {
    const int64_t left = columns - j * kPanel;
    mask[j] = static_cast<__mmask16>(left >= kPanel ? 0xffff : left <= 0 ? 0 : (1u << left) - 1);
  }
  // max(min, x) and min(max, x) return x when it is NaN.
  const __m512 minv = _mm512_set1_ps(e.min), maxv = _mm512_set1_ps(e.max);
  // Every row's bias and residual before any store: C and the residual
  // are often 4 KiB apart row for row (two page-aligned tensors), and a
  // residual load behind a store to an address 4 KiB off waits for it
  // (a 1x1 conv of 64 -> 256 channels with its residual ran at half speed).
  for (int64_t r = 0; r < Rows; ++r)
    for (int64_t j = 0; j < Panels; ++j) {
      if (e.bias) acc[r][j] = _mm512_add_ps(acc[r][j], _mm512_maskz_loadu_ps(mask[j], e.bias + j * kPanel));
      if (e.residual)
        acc[r][j] = _mm512_add_ps(acc[r][j], _mm512_maskz_loadu_ps(mask[j], e.residual + r * residual_stride(e, ldc) +
                                                                                j * kPanel));
    }
  for (int64_t r = 0; r < Rows; ++r)
    for (int64_t j = 0; j < Panels; ++j) {
      // The maskz forms: GCC 12 takes the plain ones' undefined pass-through
      // for an uninitialised read (-Wuninitialized).
      const __m512 v = _mm512_maskz_min_ps(0xffff, maxv, _mm512_maskz_max_ps(0xffff, minv, acc[r][j]));
      _mm512_mask_storeu_ps(c + r * ldc + j * kPanel, mask[j], v);
    }
}
#endif

using Kernel = void (*)(int64_t, const ARows&, const float*, const Epilogue&, float*, int64_t, int64_t);

// One ISA's micro-kernels for tiles of up to `rows` rows by `panels`
// panels: kernels[p - 1][r - 1] covers r rows and p panels (a last block
// of fewer columns takes fewer).
struct KernelSet {
  int64_t rows;
  int64_t panels;
  Kernel kernels[4][12];
};

template <int64_t Panels, size_t... R>
constexpr std::array<Kernel, 12> avx512_rows(std::index_sequence<R...>) {
  std::array<Kernel, 12> k{};
  ((k[R] = kernel_avx512<static_cast<int64_t>(R) + 1, Panels>), ...);
  return k;
}

template <int64_t Rows, size_t... P>
KernelSet avx512_set(std::index_sequence<P...>) {
  KernelSet set{Rows, static_cast<int64_t>(sizeof...(P)), {}};
  ((std::copy_n(avx512_rows<static_cast<int64_t>(P) + 1>(std::make_index_sequence<Rows>()).begin(), Rows,
                 set.kernels[P])),
   ...);
  return set;
}

// The AVX-512 sets: 6 x 4 panels for most products, 12 x 2 for a few rows
// of great depth (kernel_avx512) and for blocks of at most 32 columns (its
// 24 accumulators, where 6 x 2 panels would have 12). Which one gemm_block
// takes for m rows of depth k in a block of `columns`.
constexpr int64_t kDeepRows = 64;   // fewer rows than this ...
constexpr int64_t kDeepDepth = 2048;  // ... at this depth or more: 12 x 2

const KernelSet* chosen_kernels(int64_t m, int64_t k, int64_t columns) {
  static const KernelSet plain{6, 1, {{kernel_plain<1>, kernel_plain<2>, kernel_plain<3>, kernel_plain<4>,
                                       kernel_plain<5>, kernel_plain<6>}}};
#ifdef HETSCHED_FAST_X86
  static const KernelSet avx2{6, 1, {{kernel_avx2<1>, kernel_avx2<2>, kernel_avx2<3>, kernel_avx2<4>, kernel_avx2<5>,
                                      kernel_avx2<6>}}};
  static const KernelSet wide = avx512_set<6>(std::make_index_sequence<4>());
  static const KernelSet deep = avx512_set<12>(std::make_index_sequence<2>());
  // HETSCHED_GEMM_TILE=12x32 takes the 12 x 2 set everywhere, =6x64 the
  // 6 x 4 set wherever a block has more than 32 columns (A/B runs).
  static const std::string forced = [] {
    const char* v = std::getenv("HETSCHED_GEMM_TILE");
    return std::string(v ? v : "");
  }();
  if (cpu_has_avx512f()) {
    if (forced == "12x32" || columns <= kBlockColumns / 2) return &deep;
    if (forced == "6x64") return &wide;
    return m < kDeepRows && k >= kDeepDepth ? &deep : &wide;
  }
  if (cpu_has_avx2_fma()) return &avx2;
#endif
  return &plain;
}

}  // namespace

int64_t block_columns(int64_t n, int64_t tasks_per_block, int threads) {
  constexpr int64_t kTasksPerThread = 4;
  const int64_t wide = (n + kBlockColumns - 1) / kBlockColumns * tasks_per_block;
  return threads > 1 && wide < kTasksPerThread * threads ? kBlockColumns / 2 : kBlockColumns;
}

const char* gemm_isa() { return cpu_has_avx512f() ? "avx512f" : cpu_has_avx2_fma() ? "avx2" : "plain"; }

void gemm_block(int64_t m, int64_t k, int64_t columns, const float* a, int64_t lda, const float* panels,
                const Epilogue& epilogue, float* c, int64_t ldc) {
  gemm_block(m, k, columns, ARows{a, lda}, panels, epilogue, c, ldc);
}

namespace {

// gemm_block over depth k of panels `panel_stride` floats apart (a chunk of
// a deeper product's panels, or k * kPanel).
void block(int64_t m, int64_t k, int64_t columns, const ARows& a, const float* panels, int64_t panel_stride,
           const Epilogue& epilogue, float* c, int64_t ldc) {
  const KernelSet& set = *chosen_kernels(m, k, columns);
  // Sets narrower than a block take it in parts of their width.
  const int64_t set_columns = set.panels * kPanel;
  for (int64_t j = 0; j < columns; j += set_columns) {
    const int64_t width = std::min(set_columns, columns - j);
    const float* panel = panels + j / kPanel * panel_stride;
    const Kernel* kernels = set.kernels[(width + kPanel - 1) / kPanel - 1];
    // A set narrower than the block prefetches the block's next part while
    // it runs this one, and the last part the caller's next panels: one
    // part ahead, not a block, so that both fit in L2 beside A (ResNet-50's
    // 512-channel 3x3 at 7x7, depth 4608: 1.18 MB a block; fetched a block
    // ahead, 2.0 ms in the model on one Xeon thread, a part ahead 1.82).
    const bool last_part = j + set_columns >= columns;
    const float* next = last_part ? epilogue.next_panels : panels + (j + set_columns) / kPanel * panel_stride;
    const Epilogue e{epilogue.bias ? epilogue.bias + j : nullptr, epilogue.residual ? epilogue.residual + j : nullptr,
                     next, epilogue.min, epilogue.max, 1, epilogue.residual_ld, panel_stride};
    // Row tiles of near-equal height: 28 rows as 10 + 9 + 9, not 12 + 12 +
    // 4, whose 4-row tile runs its FMAs at a third of the rate (8 chains of
    // 4 cycles' latency keep two FMA pipes busy; 8 accumulators do not).
    const int64_t tiles = (m + set.rows - 1) / set.rows;
    const int64_t height = m / tiles, taller = m % tiles;
    // Each row tile prefetches its share of the next panels' rows, spread
    // over its steps of k: one tile alone could not fetch a block's panels
    // from memory in its time (BERT-base's 768 x 32 block: 96 KiB in a
    // twelfth of the block's time).
    const int64_t share = (k + tiles - 1) / tiles;
    for (int64_t i = 0, t = 0; i < m; ++t) {
      const int64_t rows = height + (t < taller ? 1 : 0);
      Epilogue ei = e;
      ei.residual = e.residual ? e.residual + i * residual_stride(e, ldc) : nullptr;
      ei.next_panels = e.next_panels && t * share < k ? e.next_panels + t * share * kPanel : nullptr;
      ei.prefetch_every = std::max<int64_t>(1, k / share);
      kernels[rows - 1](k, a.from(i), panel, ei, c + i * ldc + j, ldc, width);
      i += rows;
    }
  }
}

// Past kChunkDepth, a block's panels outgrow L2 (FCN's head, a 3x3 conv on
// 2048 channels, depth 18432: 4.7 MB for 64 columns) and every row tile
// streamed them again from L3 or memory (111 GFLOP/s); the depth then goes
// in chunks of at most kChunk (512 KB of panels), each over every row
// tile, its sums added into C. Only the first chunk adds the bias and the
// caller's residual, only the last clamps and prefetches the next panels.
constexpr int64_t kChunkDepth = 8192;
constexpr int64_t kChunk = 2048;

}  // namespace

void gemm_block_slice(int64_t m, int64_t k, int64_t columns, const ARows& a, const float* panels, int64_t panel_stride,
                      const Epilogue& epilogue, float* c, int64_t ldc) {
  block(m, k, columns, a, panels, panel_stride, epilogue, c, ldc);
}

void gemm_block(int64_t m, int64_t k, int64_t columns, const ARows& a, const float* panels, const Epilogue& epilogue,
                float* c, int64_t ldc) {
  const int64_t stride = k * kPanel;
  if (k <= kChunkDepth) return block(m, k, columns, a, panels, stride, epilogue, c, ldc);
  // Chunks inside one segment of A each: a plain row-major A over them.
  const int64_t length = k / a.segments;
  const int64_t per_segment = (length + kChunk - 1) / kChunk;
  const int64_t chunks = a.segments * per_segment;
  for (int64_t n = 0; n < chunks; ++n) {
    const int64_t s = n / per_segment, part = n % per_segment;
    const int64_t q0 = part * length / per_segment, q1 = (part + 1) * length / per_segment;
    const ARows an{a.a + s * a.segment_stride + q0, a.lda, 1, 0, a.row_offsets};
    Epilogue e = epilogue;
    if (n > 0) {
      e.bias = nullptr;
      e.residual = c;
      e.residual_ld = -1;
    }
    if (n + 1 < chunks) {
      e.min = -std::numeric_limits<float>::infinity();
      e.max = std::numeric_limits<float>::infinity();
      e.next_panels = nullptr;
    }
    block(m, q1 - q0, columns, an, panels + (s * length + q0) * kPanel, stride, e, c, ldc);
  }
}

}  // namespace hetsched::cpu::fast
