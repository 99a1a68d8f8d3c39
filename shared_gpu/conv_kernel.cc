#include "shared_gpu/conv_kernel.h"

// The generated arrays are `inline constexpr` at namespace scope, named by
// file stem: wrapped in a namespace so another engine's shader of the same
// stem cannot collide with them. <cstdint> is included first (above) so the
// generated headers' own include of it is a no-op.
namespace hetsched::gpu::spirv {
#include "shared_gpu/shaders/conv2d_coopmat_spv.h"
#include "shared_gpu/shaders/conv2d_reduce_spv.h"
#include "shared_gpu/shaders/conv2d_spv.h"
#include "shared_gpu/shaders/depthwise_conv2d_spv.h"
#include "shared_gpu/shaders/depthwise_mean_spv.h"
#include "shared_gpu/shaders/conv2d_coopmat_half_spv.h"
#include "shared_gpu/shaders/conv2d_half_spv.h"
#include "shared_gpu/shaders/conv2d_reduce_half_spv.h"
#include "shared_gpu/shaders/depthwise_conv2d_half_spv.h"
#include "shared_gpu/shaders/depthwise_mean_half_spv.h"
}  // namespace hetsched::gpu::spirv

namespace hetsched::gpu {

namespace {

uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

}  // namespace

std::span<const uint32_t> conv2d_spirv(bool half) {
  return half ? std::span<const uint32_t>(spirv::kConv2dHalfSpv) : spirv::kConv2dSpv;
}
std::span<const uint32_t> conv2d_reduce_spirv(bool half) {
  return half ? std::span<const uint32_t>(spirv::kConv2dReduceHalfSpv) : spirv::kConv2dReduceSpv;
}
std::span<const uint32_t> depthwise_conv2d_spirv(bool half) {
  return half ? std::span<const uint32_t>(spirv::kDepthwiseConv2dHalfSpv) : spirv::kDepthwiseConv2dSpv;
}
std::span<const uint32_t> depthwise_mean_spirv(bool half) {
  return half ? std::span<const uint32_t>(spirv::kDepthwiseMeanHalfSpv) : spirv::kDepthwiseMeanSpv;
}
uint32_t depthwise_mean_group_size(int64_t plane) {
  uint32_t size = 64;
  while (size < 256 && size < plane) size *= 2;
  return size;
}
std::span<const uint32_t> conv2d_coopmat_spirv(bool half) {
  return half ? std::span<const uint32_t>(spirv::kConv2dCoopmatHalfSpv) : spirv::kConv2dCoopmatSpv;
}

std::vector<uint32_t> coopmat_specialization(const CoopMatConv& coopmat, uint32_t tile_channels,
                                             uint32_t tile_pixels, uint32_t invocations) {
  if (coopmat.subgroup_size == 0 || invocations % coopmat.subgroup_size != 0) return {};
  if (coopmat.frag_k == 0 || 16 % coopmat.frag_k != 0) return {};
  const uint32_t subgroups = invocations / coopmat.subgroup_size;
  // Prefer the squarest grid: each subgroup's share of the tile is then
  // closest to square and loads the fewest fragments per product.
  std::vector<uint32_t> best;
  uint32_t best_loads = 0;
  for (uint32_t warps_m = 1; warps_m <= subgroups; ++warps_m) {
    if (subgroups % warps_m != 0) continue;
    const uint32_t warps_n = subgroups / warps_m;
    if (tile_channels % (warps_m * coopmat.frag_m) != 0 || tile_pixels % (warps_n * coopmat.frag_n) != 0) continue;
    const uint32_t loads = tile_channels / warps_m / coopmat.frag_m + tile_pixels / warps_n / coopmat.frag_n;
    if (best.empty() || loads < best_loads) {
      best = {warps_m, warps_n, coopmat.frag_m, coopmat.frag_n, coopmat.frag_k};
      best_loads = loads;
    }
  }
  return best;
}


ConvGemmShape conv_gemm_shape(const ConvPush& p) {
  ConvGemmShape s;
  s.pixels = int64_t{p.batch} * p.out_h * p.out_w;
  s.group_out = p.group_out;
  s.group_k = int64_t{p.group_channels} * p.kernel_h * p.kernel_w;
  s.groups = p.group_out == 0 ? 1 : p.out_channels / p.group_out;
  return s;
}

bool conv_tap_major(const ConvPush& p) { return p.group_channels % kConvTileK == 0; }

std::array<uint32_t, 3> conv_workgroups(const ConvPush& p, const ConvTiling& t) {
  const ConvGemmShape s = conv_gemm_shape(p);
  return {ceil_div(s.pixels, t.tile_pixels), ceil_div(s.group_out, t.tile_channels),
          static_cast<uint32_t>(s.groups * t.splits)};
}

ConvSpecialization conv_specialization(const ConvPush& p, const ConvTiling& t, ConvLayout layout) {
  return {t.tile_channels / 16,        t.tile_pixels / 16,        t.splits,
          t.splits == 1 ? p.epilogue_ops : 0, conv_tap_major(p) ? 1u : 0u, layout == ConvLayout::kNhwc ? 1u : 0u};
}

std::vector<uint32_t> conv_taps(const ConvPush& p, ConvLayout layout) {
  std::vector<uint32_t> table;
  if (conv_tap_major(p)) return table;
  const bool nhwc = layout == ConvLayout::kNhwc;
  for (uint32_t c = 0; c < p.group_channels; ++c)
    for (uint32_t kh = 0; kh < p.kernel_h; ++kh)
      for (uint32_t kw = 0; kw < p.kernel_w; ++kw) {
        const uint32_t dh = kh * p.dilation_h, dw = kw * p.dilation_w;
        table.push_back(nhwc ? (dh * p.in_w + dw) * p.channels + c : (c * p.in_h + dh) * p.in_w + dw);
        table.push_back(dh | dw << 16);
      }
  return table;
}

uint64_t conv_partial_bytes(const ConvPush& p, const ConvTiling& t) {
  if (t.splits <= 1) return 0;
  return uint64_t{p.batch} * p.out_channels * p.out_h * p.out_w * t.splits * sizeof(float);
}

}  // namespace hetsched::gpu
