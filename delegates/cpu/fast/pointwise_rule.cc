#include "delegates/cpu/fast/pointwise_rule.h"

#include <unistd.h>

#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

// bench/pointwise_bench on the development machine's EPYC (AVX-512), 1
// and 2 threads, warm and cold caches (docs/models.md, "1x1 convs"): from
// 96 input channels up the fast GEMM ran 0.8-0.95x XNNPACK's time (0.55x
// on 9 pixels) at every output width and pixel count measured without a
// residual; 64 input channels ran even warm (64x64 at 56x56: 0.95) and
// 1.36x cold, 16-48 1.1-1.4x warm and up to 2.4x cold: at k <= 64 the
// 12x32 tile's 24 stores and its epilogue's loads weigh on few steps of
// FMAs, which XNNPACK's 7x16 kernel spreads over fewer columns.
constexpr int64_t kMinInChannels = 96;
// On the Intel Xeon with 2 MiB of L2 a core, 1 thread, warm: from 40 input
// channels up the fast GEMM ran 0.82-0.96x XNNPACK's time at the inverted
// residual blocks' expansions (40x240 at 28x28 0.94, 48x288 0.88, 64x384
// at 14x14 0.86, 80x480 0.83) and ResNet's 64x64 at 56x56 (0.88); 24x72
// at 56x56 1.12, 32x16 at 112x112 1.32.
constexpr int64_t kMinInChannelsLargeL2 = 40;
constexpr int64_t kMinOutChannels = 16;
// A squeeze-and-excitation block's FCs (MobileNetV3, EfficientNet, RegNetY)
// are 1x1 convs on one pixel: 2 flops per weight read, nothing for the
// GEMM to win (and before the island's arena, island_arena.h, taking one
// out of its segment cost a cold copy of its neighbours: EfficientNet-B0
// with its SE FCs taken out ran 1.5-1.7 ms slower at 1 thread).
constexpr int64_t kMinPixels = 16;

// The residual is read in the epilogue, 12 rows at a time across the row
// stride, and not streamed as XNNPACK's add operator streams it: up to
// ~200K output elements (256x1024 at 14x14: 0.84-1.01x XNNPACK's conv +
// add) the fused Add wins, at 400K (128x512 at 28x28: 1.10-1.22x) and
// 800K (64x256 at 56x56: 1.35-1.5x) it loses.
//
// That limit is the EPYC's (1 MiB of L2 a core). On an Intel Xeon with
// 2 MiB of L2 a core the fused Add won at every size measured, warm and
// cold (64x256 at 56x56 0.70-0.83x, 128x512 at 28x28 0.78-0.80x, 256x1024
// at 14x14 0.82-0.84x). An Add left apart is an XNNPACK segment of its
// own, a pass over the output that the 16-core Xeon's ResNet-50 profile
// showed not scaling (0.22-0.26 ms each at 16 threads). Below 96 input
// channels, where the conv alone is at par (64x64 at 56x56 1.02-1.07x,
// 64x256 0.95-0.99x), only outputs past kMaxResidualElements leave with
// their Add (ResNet's first stage): MobileNetV3-Small's narrow projections
// (88 -> 24 at 28x28) taken out of their segments made it 2% slower here.
constexpr int64_t kMaxResidualElements = 256 * 1024;
constexpr int64_t kLargeL2Bytes = 2 << 20;
constexpr int64_t kMinResidualInChannels = 64;  // with a large L2

// This core's L2 in bytes, 0 where the C library cannot tell.
int64_t l2_bytes() {
  static const int64_t bytes = [] {
    const long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? static_cast<int64_t>(v) : int64_t{0};
  }();
  return bytes;
}

}  // namespace

bool pointwise_residual_pays(const PointwiseShape& s) {
  if (l2_bytes() >= kLargeL2Bytes)
    return pointwise_pays(s) || (cpu_has_avx512f() && s.cin >= kMinResidualInChannels &&
                                 s.cout >= kMinOutChannels && s.pixels * s.cout > kMaxResidualElements);
  return pointwise_pays(s) && s.pixels * s.cout <= kMaxResidualElements;
}

bool pointwise_pays(const PointwiseShape& s, int threads) {
  if (!cpu_has_avx512f()) return false;
  const int64_t min_cin =
      l2_bytes() >= kLargeL2Bytes && threads <= kMaxNarrowThreads ? kMinInChannelsLargeL2 : kMinInChannels;
  return s.cin >= min_cin && s.cout >= kMinOutChannels && s.pixels >= kMinPixels;
}

PointwiseChoice pointwise_choice() { return rule_choice("HETSCHED_POINTWISE"); }

}  // namespace hetsched::cpu::fast
