// How conv2d.comp (shared_gpu/shaders/) divides one Conv among workgroups:
// the output channels and pixels of a workgroup's tile, and how many slices
// K (= input channels of a group x kernel taps) is split into. Chosen per
// shape when an island is lowered (Vulkan) or planned (VGF); a benchmark may
// force one (the Vulkan delegate's LoweringOptions::conv_tiling). The layout
// (NCHW or NHWC) does not enter the choice.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "hetsched/status.h"

namespace hetsched::gpu {

struct ConvTiling {
  uint32_t tile_channels = 64;  // 64 or 128
  uint32_t tile_pixels = 64;    // 64 or 128
  // 1: one pass that applies bias and epilogue. More: each slice writes
  // partial sums and conv2d_reduce.comp adds them (two dispatches).
  uint32_t splits = 1;

  friend bool operator==(const ConvTiling&, const ConvTiling&) = default;
};

// The shape of one Conv as an implicit GEMM per group.
struct ConvGemmShape {
  int64_t pixels = 0;     // batch x output height x output width
  int64_t group_out = 0;  // output channels per group
  int64_t group_k = 0;    // input channels per group x kernel taps
  int64_t groups = 1;
};

// The tiling for `shape`, tuned on an H200 but for no particular GPU:
// 64 pixels by 128 channels (when there are that many) or 64, then split-K
// until there are enough workgroups for a large GPU, while each slice keeps
// enough K steps to hide its loads and the partial sums stay small. Tiles
// keep at most `max_tile_channels` (64 or 128) channels.
ConvTiling choose_conv_tiling(const ConvGemmShape& shape, uint32_t max_tile_channels = 128);

// K steps (of 16) in one group's sum: the most slices worth making.
int64_t conv_k_steps(const ConvGemmShape& shape);

// `tiling` with its splits capped at one slice per K step and at partial
// sums far below any device's storage-buffer range (for forced tilings;
// chosen ones already are).
ConvTiling clamp_conv_tiling(ConvTiling tiling, const ConvGemmShape& shape);

// "128x64/4" (channels x pixels / splits) and back; kInvalidArgument
// names the text when it is not of that form or the sizes are not 64 or 128.
Result<ConvTiling> parse_conv_tiling(std::string_view text);
std::string to_string(const ConvTiling& tiling);

}  // namespace hetsched::gpu
