// When a 1x1 conv (group 1, no pads) runs faster on the fast GEMM
// (pointwise_conv.cc) than on XNNPACK's conv operator, by its shape alone.
//
// A 1x1 conv is a GEMM [pixels x Cin] . [Cin x Cout] on NHWC data, and this
// XNNPACK snapshot runs it on its 2022 GEMM kernels (7x16 on AVX-512); the
// fast GEMM's 12x32 AVX-512 kernel does more work per loaded element. The
// thresholds come from bench/pointwise_bench.cc over ResNet, MobileNetV3,
// EfficientNet and RegNet shapes and odd ones (docs/models.md, "1x1 convs").
#pragma once

#include <cstdint>

#include "delegates/cpu/fast/rule_choice.h"

namespace hetsched::cpu::fast {

struct PointwiseShape {
  int64_t cin = 0, cout = 0;
  int64_t pixels = 0;  // output pixels, all images
  int64_t stride = 1;  // the larger of the two strides
};

// Whether the fast GEMM beats XNNPACK's 1x1 conv at `shape` on this CPU
// (false without AVX-512: the AVX2 kernel is XNNPACK's own size, 6x16):
// from 96 input channels, or 40 on a core with 2 MiB of L2 or more at up
// to kMaxNarrowThreads threads.
// `threads`: the island's; the large-L2 threshold is measured at 1 and 2
// (at 16, narrow 1x1 convs taken out of their segments lost, each a step
// of its own waking the pool: ShuffleNetV2 1.31 -> 1.52 ms with the depthwise
// and stem rules), so past kMaxNarrowThreads only the general one holds.
bool pointwise_pays(const PointwiseShape& shape, int threads = 1);
inline constexpr int kMaxNarrowThreads = 2;

// Whether it does with a residual Add (and Relu) in its epilogue, against
// XNNPACK's conv and add operators. Depends on the core's L2: with 2 MiB or
// more, where pointwise_pays() at any size, and from 64 input channels for
// outputs of more than 256K elements; with less, where pointwise_pays() and
// the output is at most 256K elements.
bool pointwise_residual_pays(const PointwiseShape& shape);

// HETSCHED_POINTWISE: "off" keeps every 1x1 conv on XNNPACK, "on" takes
// every one the kernel supports whatever its shape (benchmarks and tests);
// unset (or anything else), pointwise_pays() decides. Read on every call.
using PointwiseChoice = RuleChoice;  // rule_choice.h
PointwiseChoice pointwise_choice();

}  // namespace hetsched::cpu::fast
