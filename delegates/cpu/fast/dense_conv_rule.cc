#include "delegates/cpu/fast/dense_conv_rule.h"

#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

// bench/pointwise_bench's kN shapes on the development machine's EPYC
// (AVX-512), 1 thread, warm and cold (docs/models.md, "Dense convs on the
// fast GEMM"): with a depth (taps x Cin) of 512 or more and 64 or more
// output channels the fast GEMM ran 0.75-0.99x XNNPACK's time (ResNet-50's
// 512-channel 3x3 at 7x7: 0.81-0.83 warm, 0.76 cold; its stride-2 3x3s
// 0.75-0.92; 1024 channels at 4x4: 0.52), at any map size measured up to
// 112x112; below, the gather and the 12x32 tile's epilogue weigh on too
// few FMAs (48 -> 64 at 56x56, K 432: 0.97; a 7x7 stem, K 147: 1.76; a 3x3
// stem, K 27: 2.8), and 24 output channels fill 32-column blocks badly
// (96 -> 24 at 160x160: 1.25).
constexpr int64_t kMinDepth = 512;
constexpr int64_t kMinOutChannels = 64;
// The gathered A is one buffer of pixels x depth floats, made at init: a
// 640x640 map would need hundreds of MB. Past this, XNNPACK keeps it.
constexpr int64_t kMaxGatheredBytes = int64_t{16} << 20;
// Windows read in place (no gather; the session-14 Xeon, AVX-512, 1 and 2
// threads): 5x5 and 7x7 kernels ran 0.62-0.81x XNNPACK's time from a depth
// of 75 and 24 output channels (a 7x7 stem on 3 channels, 224x224 -> 64 or
// 32: 0.62-0.67; 5x5 at 7x7-56x56 maps, 16-48 -> 24-128 channels: 0.79-0.81),
// 8 -> 16 at 112x112 even (0.99); 3x3s from a depth of 384 (48 -> 96
// stride 2: 0.81-0.83; 32 -> 64 at depth 288: 0.93; 24 -> 48: 1.04; a 3x3
// stem, depth 27: 1.0-1.35).
constexpr int64_t kMinWideTaps = 25;
constexpr int64_t kMinWideDepth = 64;
constexpr int64_t kMinWideOutChannels = 24;
constexpr int64_t kMinInPlaceDepth = 384;

}  // namespace

bool dense_conv_pays(const DenseConvShape& s) {
  if (!cpu_has_avx512f() || s.taps <= 1) return false;
  const int64_t depth = s.taps * s.cin;
  // The stem kernel (stem_conv.cc), 1 thread on the 2-core Xeon:
  // MobileNetV2's 3 -> 32 3x3 stride-2 stem, 112x112 out, 0.17-0.18 ms
  // against XNNPACK's 0.31 (its input's transpose included), SqueezeNet's
  // 3 -> 64 0.32 against 0.31 (its output, 3.2 MB, written to memory).
  if (s.stem_kernel) return true;
  if (!s.windows_in_place)
    return depth >= kMinDepth && s.cout >= kMinOutChannels &&
           s.pixels * depth * static_cast<int64_t>(sizeof(float)) <= kMaxGatheredBytes;
  return (s.taps >= kMinWideTaps && depth >= kMinWideDepth && s.cout >= kMinWideOutChannels) ||
         (depth >= kMinInPlaceDepth && s.cout >= kMinOutChannels);
}

DenseConvChoice dense_conv_choice() { return rule_choice("HETSCHED_DENSE_CONV"); }

}  // namespace hetsched::cpu::fast
