#include "shared_gpu/conv_tiling.h"

#include <algorithm>
#include <charconv>

#include "shared_gpu/conv_kernel.h"

namespace hetsched::gpu {

namespace {

// Enough workgroups for a large GPU: three per multiprocessor of a
// 132-multiprocessor H100/H200 (conv2d.comp's tilings take 84-123
// registers per invocation, so two of them run on each at once). Smaller
// GPUs are filled all the more.
constexpr int64_t kTargetWorkgroups = 396;
// A slice shorter than this many K steps spends much of its time filling
// its first tile and writing its partial sums: on an H200, 9 steps per
// slice beat 8 (ResNet's 512x7x7 conv: 64x64/32 8.5 TFLOP/s, /36 6.9).
constexpr int64_t kMinStepsPerSlice = 9;
// Partial sums (splits x the output) stay far below the smallest
// maxStorageBufferRange a device may have (2^27 bytes). Chosen tilings stay
// under it anyway (fewer than 2 x kTargetWorkgroups tiles of partial sums).
constexpr int64_t kMaxPartialBytes = int64_t{64} << 20;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t workgroups(const ConvGemmShape& s, const ConvTiling& t) {
  return ceil_div(s.pixels, t.tile_pixels) * ceil_div(s.group_out, t.tile_channels) * s.groups;
}

Status malformed(std::string_view text, std::string_view why) {
  return invalid_argument("failed to parse conv tiling '" + std::string(text) + "': " + std::string(why));
}

constexpr std::string_view kForm = "expected <channels>x<pixels>/<splits>, e.g. 128x64/4";

Result<uint32_t> parse_number(std::string_view digits, std::string_view text) {
  uint32_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return malformed(text, kForm);
  return v;
}

// `tiling` with the splits that bring its workgroups nearest the target,
// within the limit on slice length.
ConvTiling with_splits(const ConvGemmShape& shape, ConvTiling tiling) {
  const int64_t tiles = workgroups(shape, tiling);
  const int64_t splits = (kTargetWorkgroups + tiles / 2) / tiles;
  tiling.splits =
      static_cast<uint32_t>(std::max<int64_t>(std::min(splits, conv_k_steps(shape) / kMinStepsPerSlice), 1));
  return clamp_conv_tiling(tiling, shape);
}

}  // namespace

int64_t conv_k_steps(const ConvGemmShape& shape) { return std::max<int64_t>(ceil_div(shape.group_k, kConvTileK), 1); }

ConvTiling clamp_conv_tiling(ConvTiling tiling, const ConvGemmShape& shape) {
  const int64_t partial_bytes = std::max<int64_t>(shape.pixels * shape.group_out * shape.groups * 4, 1);
  const int64_t most = std::min(conv_k_steps(shape), std::max<int64_t>(kMaxPartialBytes / partial_bytes, 1));
  tiling.splits = static_cast<uint32_t>(std::clamp<int64_t>(tiling.splits, 1, most));
  return tiling;
}

ConvTiling choose_conv_tiling(const ConvGemmShape& shape, uint32_t max_tile_channels) {
  // 128 channels per tile: each input value read from shared memory feeds
  // twice the FMAs, at half the workgroups. Worth it while split-K can
  // still bring those near the target. 128 pixels per tile lost on an H200
  // at every shape measured (bench/vulkan_ops_bench --conv-tilings).
  if (shape.group_out >= 128 && max_tile_channels >= 128) {
    const ConvTiling wide = with_splits(shape, {128, 64, 1});
    if (workgroups(shape, wide) * wide.splits >= kTargetWorkgroups * 3 / 4) return wide;
  }
  return with_splits(shape, {64, 64, 1});
}

Result<ConvTiling> parse_conv_tiling(std::string_view text) {
  const size_t x = text.find('x');
  const size_t slash = text.find('/');
  if (x == std::string_view::npos || slash == std::string_view::npos || slash < x) return malformed(text, kForm);
  ConvTiling t;
  HS_ASSIGN_OR_RETURN(t.tile_channels, parse_number(text.substr(0, x), text));
  HS_ASSIGN_OR_RETURN(t.tile_pixels, parse_number(text.substr(x + 1, slash - x - 1), text));
  HS_ASSIGN_OR_RETURN(t.splits, parse_number(text.substr(slash + 1), text));
  for (uint32_t size : {t.tile_channels, t.tile_pixels})
    if (size != 64 && size != 128) return malformed(text, "tile sizes must be 64 or 128");
  if (t.splits == 0) return malformed(text, "splits must be at least 1");
  return t;
}

std::string to_string(const ConvTiling& tiling) {
  return std::to_string(tiling.tile_channels) + "x" + std::to_string(tiling.tile_pixels) + "/" +
         std::to_string(tiling.splits);
}

}  // namespace hetsched::gpu
