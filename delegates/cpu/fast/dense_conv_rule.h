// When a dense KxK conv (group 1, kernel larger than 1x1; not one Winograd
// takes) runs faster on the fast GEMM, its windows read in place or gathered into A
// (pointwise_conv.cc's GemmConv), than on XNNPACK's conv operator, by its
// shape alone.
//
// XNNPACK's direct conv reads its weights once per 7-row tile of output
// pixels through an indirection buffer; at batch 1 deep in a network (7x7
// or 14x14 maps, 256-512 channels: ResNet's last stage, its stride-2 3x3s,
// VGG's 512-channel 3x3s) there are few such tiles, the weights come from
// memory, and it ran 163 GFLOP/s warm where the fast GEMM runs ~240. The
// gather costs one pass over taps x the input. The thresholds come from
// bench/pointwise_bench.cc's kN shapes (docs/models.md, "Dense convs on the
// fast GEMM").
#pragma once

#include <cstdint>

#include "delegates/cpu/fast/rule_choice.h"

namespace hetsched::cpu::fast {

struct DenseConvShape {
  int64_t cin = 0, cout = 0;
  int64_t taps = 0;    // kernel_h x kernel_w
  int64_t pixels = 0;  // output pixels, all images
  int64_t stride = 1;  // the larger of the two strides
  // The NHWC kernel reads the windows in place (pointwise_conv.cc) rather
  // than gathering them into a buffer of pixels x depth floats.
  bool windows_in_place = false;
  // The stem kernel runs it (stem_conv.h: a few input channels, a shallow
  // depth) where it writes NHWC, and the island has at most
  // kMaxNarrowThreads threads (pointwise_rule.h: at 16 the stem as a step of
  // its own, its input copied on one thread, was no faster than XNNPACK).
  bool stem_kernel = false;
};

// Whether the fast GEMM beats XNNPACK's conv at `shape` on this CPU (false
// without AVX-512).
bool dense_conv_pays(const DenseConvShape& shape);

// HETSCHED_DENSE_CONV: "off" keeps every dense conv on XNNPACK, "on" takes
// every one the kernel supports that Winograd does not (tests and
// benchmarks); unset (or anything else), dense_conv_pays() decides. Read on
// every call.
using DenseConvChoice = RuleChoice;  // rule_choice.h
DenseConvChoice dense_conv_choice();

}  // namespace hetsched::cpu::fast
