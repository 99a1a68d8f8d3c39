#include "delegates/cpu/fast/pointwise_rule.h"

#include <cstdlib>
#include <string>

#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

// bench/pointwise_bench on the development machine's EPYC (AVX-512), one
// thread (docs/models.md, "1x1 convs"): from 96 input channels up the fast
// GEMM ran 0.55-0.97x XNNPACK's time at every output width and pixel count
// measured (the residual Add and Relu in its epilogue, XNNPACK's as a
// second operator), the 64-channel ones even without a residual (64x64 at
// 56x56: 0.94-1.03) and 1.2-1.8x slower with one (64x256), and 16-48 input
// channels 1.2-2x slower: at k <= 64 the 12x32 tile's 24 stores and the
// loads of its epilogue weigh on k steps of FMAs, which XNNPACK's 7x16
// kernel spreads over fewer columns.
constexpr int64_t kMinInChannels = 96;
constexpr int64_t kMinOutChannels = 16;
// A squeeze-and-excitation block's FCs (MobileNetV3, EfficientNet, RegNetY)
// are 1x1 convs on one pixel: 2 flops per weight read, nothing for the
// GEMM to win, while taking them out splits their segment in two, and the
// big tensor the block's Mul reads then crosses segments (EfficientNet-B0
// ran 1.4 ms slower at 1 thread with them on the fast GEMM).
constexpr int64_t kMinPixels = 16;

// The residual is read in the epilogue, 12 rows at a time across the row
// stride, and not streamed as XNNPACK's add operator streams it: up to
// ~200K output elements (256x1024 at 14x14: 0.84-1.01x XNNPACK's conv +
// add) the fused Add wins, at 400K (128x512 at 28x28: 1.10-1.22x) and
// 800K (64x256 at 56x56: 1.35-1.5x) it loses.
constexpr int64_t kMaxResidualElements = 256 * 1024;

}  // namespace

bool pointwise_residual_pays(const PointwiseShape& s) {
  return pointwise_pays(s) && s.pixels * s.cout <= kMaxResidualElements;
}

bool pointwise_pays(const PointwiseShape& s) {
  if (!cpu_has_avx512f()) return false;
  return s.cin >= kMinInChannels && s.cout >= kMinOutChannels && s.pixels >= kMinPixels;
}

PointwiseChoice pointwise_choice() {
  const char* v = std::getenv("HETSCHED_POINTWISE");
  if (!v) return PointwiseChoice::kRule;
  const std::string s = v;
  return s == "off" ? PointwiseChoice::kOff : s == "on" ? PointwiseChoice::kOn : PointwiseChoice::kRule;
}

}  // namespace hetsched::cpu::fast
