#include "shared_gpu/pointwise_kernel.h"

#include <algorithm>

// The generated arrays are `inline constexpr` at namespace scope, named by
// file stem: wrapped in a namespace of their own (conv_kernel.cc says why).
namespace hetsched::gpu::spirv {
#include "shared_gpu/shaders/pointwise_conv_half_spv.h"
#include "shared_gpu/shaders/pointwise_conv_spv.h"
}  // namespace hetsched::gpu::spirv

namespace hetsched::gpu {

namespace {

constexpr uint32_t kGroupSize = 256;  // pointwise_conv.comp's local_size_x

uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

}  // namespace

std::span<const uint32_t> pointwise_conv_spirv(bool half) {
  return half ? std::span<const uint32_t>(spirv::kPointwiseConvHalfSpv) : spirv::kPointwiseConvSpv;
}

bool pointwise_fits(const ConvPush& p) {
  if (p.kernel_h != 1 || p.kernel_w != 1 || p.stride_h != 1 || p.stride_w != 1 || p.pad_top != 0 ||
      p.pad_left != 0 || p.out_h != p.in_h || p.out_w != p.in_w || p.group_channels != p.channels ||
      p.group_out != p.out_channels)
    return false;
  const int64_t fmas = int64_t{p.batch} * p.out_h * p.out_w * p.out_channels * p.channels;
  return fmas <= kPointwiseMaxFmas;
}

PointwisePush pointwise_push(const ConvPush& p, bool has_bias, bool has_residual) {
  PointwisePush q{};
  q.batch = p.batch;
  q.pixels = p.out_h * p.out_w;
  q.k = p.channels;
  q.out_channels = p.out_channels;
  q.quads = ceil_div(p.out_channels, 4);
  q.has_bias = has_bias ? 1 : 0;
  q.has_residual = has_residual ? 1 : 0;
  q.epilogue_ops = p.epilogue_ops;
  std::copy(std::begin(p.epilogue_params), std::end(p.epilogue_params), std::begin(q.epilogue_params));
  return q;
}

uint32_t pointwise_slices(const PointwisePush& q) {
  // More slices until the grid fills the GPU.
  const int64_t slots = int64_t{q.batch} * q.pixels * q.quads;
  uint32_t slices = 1;
  while (slices < 64 && int64_t{slices} * 2 * 4 <= int64_t{q.k} && ceil_div(slots * slices, kGroupSize) < kPointwiseWorkgroups)
    slices *= 2;
  return slices;
}

std::array<uint32_t, 3> pointwise_workgroups(const PointwisePush& q, uint32_t slices) {
  // linear_group(): x up to 65535, the rest in y.
  constexpr uint32_t kMaxX = 65535;
  const uint32_t groups = std::max<uint32_t>(1, ceil_div(int64_t{q.batch} * q.pixels * q.quads * slices, kGroupSize));
  const uint32_t x = std::min(groups, kMaxX);
  return {x, (groups + x - 1) / x, 1};
}

}  // namespace hetsched::gpu
