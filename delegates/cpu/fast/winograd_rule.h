// When a dense 3x3 stride-1 conv runs faster by Winograd F(4x4, 3x3)
// (winograd_conv.cc) than on XNNPACK's direct conv, by its shape alone.
//
// Winograd does 1/4 of the multiply-adds in its GEMMs but pays for two
// transforms (per tile: ~8 flops per input channel per point, ~6 per
// output channel) and reads 4x the weights (36 per channel pair instead of
// 9) once per block of tiles. So it wins when there are enough channels
// for the GEMM to dominate the transforms, and enough tiles for the GEMM's
// rows to fill its 12-row micro-kernel and to amortise the weights.
// The thresholds come from bench/winograd_bench.cc over ResNet, VGG,
// RegNet and PP-OCR-det-like shapes (docs/models.md, "Winograd").
#pragma once

#include <cstdint>

#include "delegates/cpu/fast/rule_choice.h"

namespace hetsched::cpu::fast {

struct WinogradShape {
  int64_t cin = 0, cout = 0;
  int64_t out_h = 0, out_w = 0;  // per image
};

// Whether Winograd beats XNNPACK's direct conv at `shape` (at 1 and 2
// threads alike on the machines measured).
bool winograd_pays(const WinogradShape& shape);

// HETSCHED_WINOGRAD: "off" keeps every conv on XNNPACK, "on" takes every
// dense 3x3 stride-1 conv whatever its shape (benchmarks and tests);
// unset (or anything else), winograd_pays() decides. Read on every call,
// so that a benchmark may switch it between sessions.
using WinogradChoice = RuleChoice;  // rule_choice.h
WinogradChoice winograd_choice();

}  // namespace hetsched::cpu::fast
