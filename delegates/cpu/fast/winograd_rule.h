// When a dense 3x3 stride-1 conv runs faster by Winograd (winograd_conv.cc)
// than as a direct conv, and with which output tile, by its shape alone.
//
// F(4x4, 3x3) does 1/4 of the multiply-adds in its GEMMs, F(2x2, 3x3) 4/9,
// but both pay for two transforms (per tile and point, a few flops per
// input and per output channel) and read more weights (36 or 16 per
// channel pair instead of 9), once per run and often from memory. So
// Winograd wins when there are enough channels for the GEMM to dominate
// the transforms and enough tiles to amortise the weights; F(2x2) where
// F(4x4)'s weights cost more than its products save. The channel and tile
// thresholds come from bench/winograd_bench.cc over ResNet, VGG, RegNet
// and PP-OCR-det-like shapes (docs/models.md, "Winograd"); the choice of
// tile, and of Winograd past them, from a cost model fitted to whole
// models (winograd_rule.cc).
#pragma once

#include <cstdint>

#include "delegates/cpu/fast/rule_choice.h"

namespace hetsched::cpu::fast {

struct WinogradShape {
  int64_t cin = 0, cout = 0;
  int64_t out_h = 0, out_w = 0;  // per image
  int64_t batch = 1;
  int threads = 1;  // the island's: the direct conv's bands of rows each stream its weights
};

// Whether Winograd beats a direct conv (the fast GEMM's, or XNNPACK's) at
// `shape`.
bool winograd_pays(const WinogradShape& shape);

// The output tile Winograd runs a conv it takes in: 4 (F(4x4, 3x3), 1/4
// of the direct conv's multiply-adds, 4x its weights) or 2 (F(2x2, 3x3),
// 4/9 of the multiply-adds, 16/9 of the weights). HETSCHED_WINOGRAD_TILE=2
// or 4 forces one (tests and benchmarks).
int winograd_tile(const WinogradShape& shape);

// HETSCHED_WINOGRAD: "off" keeps every conv on XNNPACK, "on" takes every
// dense 3x3 stride-1 conv whatever its shape (benchmarks and tests);
// unset (or anything else), winograd_pays() decides. Read on every call,
// so that a benchmark may switch it between sessions.
using WinogradChoice = RuleChoice;  // rule_choice.h
WinogradChoice winograd_choice();

}  // namespace hetsched::cpu::fast
