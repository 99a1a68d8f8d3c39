#include "delegates/cpu/fast/winograd_rule.h"

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
// 512x512 (36 MiB of transformed weights, 4x the direct conv's) ran even
// with XNNPACK at 7x7 and at 14x14 between 0.3x and 1.1x as other jobs
// took the memory bus: the GEMMs stream the weights. 256x256 (9 MiB) and
// below win by 2x at every size measured.
constexpr int64_t kMaxChannelPairs = 512 * 256;
// Tiles cover the output in 4x4 blocks: a 7x7 output is 4 tiles, 49 of
// their 64 pixels used (0.45-0.53x XNNPACK's time at 128-256 channels),
// a 5x5 one 25 of 64, which gives back most of the 4x fewer products.
constexpr double kMinTileUse = 0.5;
constexpr int64_t kMinTiles = 4;

}  // namespace

bool winograd_pays(const WinogradShape& s) {
  const int64_t tiles = ((s.out_h + 3) / 4) * ((s.out_w + 3) / 4);
  const double use = static_cast<double>(s.out_h * s.out_w) / static_cast<double>(16 * tiles);
  return s.cin >= kMinInChannels && s.cout >= kMinOutChannels && s.cin * s.cout <= kMaxChannelPairs &&
         tiles >= kMinTiles && use >= kMinTileUse;
}

WinogradChoice winograd_choice() { return rule_choice("HETSCHED_WINOGRAD"); }

}  // namespace hetsched::cpu::fast
