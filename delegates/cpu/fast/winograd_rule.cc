#include "delegates/cpu/fast/winograd_rule.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "delegates/cpu/fast/gemm_split.h"
#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

// bench/winograd_bench on the development machine's EPYC (AVX-512), 1 and
// 2 threads (docs/models.md, "Winograd"): Winograd ran 0.3-0.6x XNNPACK's
// time from 24 input channels up (24x24 at 80x80: 0.77-0.83), even at 16
// (16x16 at 112x112: 0.97-1.10) and 2.1-5.4x slower at 3 and 8, where the
// transforms' 16-channel vectors are mostly padding and the GEMM's k is
// too short to pay for them.
constexpr int64_t kMinInChannels = 24;
constexpr int64_t kMinOutChannels = 16;
// Except 16 input channels (one whole vector in the transforms) into many
// outputs, where the conv is not tiny: 16 -> 32..128 at 20x20 to 112x112
// (SqueezeNet's fire modules, GoogLeNet's 3x3 reductions) ran 0.48-0.66x
// XNNPACK's time at 1 thread and 0.57-0.90x at 2 (bench/winograd_bench on
// the session-21 Xeon, from 3.6 M multiply-adds: 16x32 at 28x28, 16x128
// at 14x14); at 1.8 M (16x64 at 14x14, 16x32 at 20x20) 2 threads ran
// 1.3-1.5x slower, and 16 -> 16 (0.85 / 0.98), 12 or 20 input channels
// (lanes of padding) gained little or lost.
constexpr int64_t kNarrowInChannels = 16;
constexpr int64_t kNarrowMinOutChannels = 32;
constexpr double kNarrowMinFma = 3e6;
// Up to 512x256 channel pairs F(4x4) won by 2x at every size measured
// (against XNNPACK, weights warm); past it, and where 4x4 tiles would be
// mostly padding, the cost model below decides whether any tile pays.
constexpr int64_t kMaxChannelPairs = 512 * 256;
// Tiles cover the output in 4x4 blocks: a 7x7 output is 4 tiles, 49 of
// their 64 pixels used (0.45-0.53x XNNPACK's time at 128-256 channels),
// a 5x5 one 25 of 64, which gives back most of the 4x fewer products.
constexpr double kMinTileUse = 0.5;
constexpr int64_t kMinTiles = 4;

// The time a conv takes on `threads` threads, as the sum of three costs
// over the threads: its multiply-adds at the GEMM's rate, its weights
// streamed from L3 or memory (a network's weights are read once per run),
// and the transforms' elements (Winograd's V and M, tile x point x
// channel). Winograd's GEMMs split by point and column, so its weights
// are streamed once whatever the threads; the direct conv's tasks are
// bands of output rows by runs of columns (gemm_split.h), and each band
// streams all of its columns' weights again: a 7x7 map cut into 5 bands
// for 16 threads reads its weights 5 times.
// Fitted to ResNet-18/50's and VGG-11's 3x3 convs in the whole model on the
// session-18 Xeon (`hetsched bench M --profile-ops` with
// HETSCHED_WINOGRAD=on and each HETSCHED_WINOGRAD_TILE, docs/models.md
// "Winograd F(2x2, 3x3)"), each shape within ~15%: 90 GFMA/s in
// Winograd's GEMMs, 15 GB/s, 0.45 ns an element for F(4x4) and 0.3 for
// F(2x2). The direct conv's 100 GFMA/s is session 23's: since session 22's
// row tiles across output rows and weights prefetched a part ahead
// (gemm.cc), ResNet-50's 512-channel 3x3s at 7x7 took 1.77-1.84 ms on
// the direct conv at 1 thread of the 2-core Xeon against F(2x2)'s
// 2.05-2.11 (this model: 1.79 against 1.94), and 0.97-1.03 against
// 1.04-1.12 at 2 threads (0.89 against 0.97); at 16 threads of the 16-core
// Xeon 0.30 ms against 0.17 (0.27 against 0.12: the direct conv's 5 bands).
// What decides is their ratio: where F(4x4)'s 4x weights (36 per channel
// pair) outweigh its 4/9 fewer products than F(2x2)'s, F(2x2) runs it
// (256 channels at 14x14, 512 at 14x14); where the weights outweigh every
// saving, or the map is small for the channels at few threads (512 at
// 7x7 up to the threads at which its GEMM starts cutting the map into
// bands, 16 of them but not 4: gemm_split.h), the direct conv.
// Without AVX-512 the direct conv is XNNPACK's (dense_conv_rule.h): the
// model keeps session 18's fit for it, as before (80 GFMA/s, its weights
// streamed once whatever the threads), so those machines choose as they did.
constexpr double kFmaPerSecond = 90e9;
constexpr double kDirectFmaPerSecond = 100e9;
constexpr double kXnnpackDirectFmaPerSecond = 80e9;
constexpr double kWeightBytesPerSecond = 15e9;

double winograd_seconds(const WinogradShape& s, int64_t tile) {
  const double points = static_cast<double>((tile + 2) * (tile + 2));
  const double tiles = static_cast<double>(((s.out_h + tile - 1) / tile) * ((s.out_w + tile - 1) / tile) * s.batch);
  const double pairs = static_cast<double>(s.cin * s.cout);
  const double element_seconds = tile == 4 ? 0.45e-9 : 0.3e-9;
  return (points * tiles * pairs / kFmaPerSecond + points * pairs * 4 / kWeightBytesPerSecond +
          points * tiles * static_cast<double>(s.cin + s.cout) * element_seconds) /
         std::max(1, s.threads);
}

double direct_seconds(const WinogradShape& s) {
  const int64_t m = s.batch * s.out_h * s.out_w, k = 9 * s.cin;
  const bool fast_gemm = cpu_has_avx512f();
  const double bands =
      fast_gemm ? static_cast<double>(split_gemm(m, k, s.cout, k, s.cout, s.threads).row_tasks) : 1.0;
  const double rate = fast_gemm ? kDirectFmaPerSecond : kXnnpackDirectFmaPerSecond;
  const double pairs = static_cast<double>(s.cin * s.cout);
  return (9 * static_cast<double>(m) * pairs / rate + 9 * pairs * 4 * bands / kWeightBytesPerSecond) /
         std::max(1, s.threads);
}

int best_tile(const WinogradShape& s) { return winograd_seconds(s, 2) < winograd_seconds(s, 4) ? 2 : 4; }

}  // namespace

bool winograd_pays(const WinogradShape& s) {
  const bool narrow = s.cin == kNarrowInChannels && s.cout >= kNarrowMinOutChannels &&
                      9.0 * static_cast<double>(s.cin * s.cout * s.out_h * s.out_w) >= kNarrowMinFma;
  if ((s.cin < kMinInChannels && !narrow) || s.cout < kMinOutChannels) return false;
  const int64_t tiles = ((s.out_h + 3) / 4) * ((s.out_w + 3) / 4);
  if (tiles < kMinTiles) return false;
  const double use = static_cast<double>(s.out_h * s.out_w) / static_cast<double>(16 * tiles);
  if (s.cin * s.cout <= kMaxChannelPairs && use >= kMinTileUse) return true;
  return winograd_seconds(s, best_tile(s)) < direct_seconds(s);
}

int winograd_tile(const WinogradShape& s) {
  const char* forced = std::getenv("HETSCHED_WINOGRAD_TILE");
  if (forced && std::string(forced) == "2") return 2;
  if (forced && std::string(forced) == "4") return 4;
  return best_tile(s);
}

WinogradChoice winograd_choice() { return rule_choice("HETSCHED_WINOGRAD"); }

}  // namespace hetsched::cpu::fast
