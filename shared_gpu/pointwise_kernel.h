// The small-1x1-conv kernel both GPU engines run,
// shared_gpu/shaders/pointwise_conv.comp, and the host side of its
// interface: a 1x1 conv or linear layer in one dispatch, K split inside the
// workgroup (no split-K second pass). The Vulkan delegate dispatches it on
// NCHW tensors, the VGF runtime on NHWC ones (the specialisation). The
// struct mirrors the shader's push-constant block.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "shared_gpu/conv_kernel.h"

namespace hetsched::gpu {

std::span<const uint32_t> pointwise_conv_spirv(bool half = false);

// Storage buffers: X, W (pointwise_weights), bias, Y, residual (Y's shape;
// any buffer stands in, unread, without one). The specialisation: K slices
// per output (constant_id 0, pointwise_slices), X and Y NHWC (1).
inline constexpr uint32_t kPointwiseBindings = 5;

struct PointwisePush {
  uint32_t batch, pixels, k, out_channels;
  uint32_t quads;  // ceil(out_channels / 4)
  uint32_t has_bias, has_residual, epilogue_ops;
  float epilogue_params[4];
};
static_assert(sizeof(PointwisePush) == 48);

// 1x1 convs and linear layers of at most this many multiply-adds run
// pointwise_conv.comp instead of the implicit GEMM (conv2d.comp or its
// tensor-core twin, and conv2d_reduce.comp under split-K): at batch 1 those
// are latency-bound, and MobileNet-style blocks are made of them. On an
// H100 (p50 of a request, fp16 / fp32 profiles) with bounds of 0, 8M and
// 32M: MobileNetV3-Small 0.466 / 0.357 / 0.359 ms at fp16, EfficientNet-B0
// 0.854 / 0.782 / 0.687 at fp32, MnasNet 0.624 / 0.527 / 0.452 at fp32.
// ResNet-50's 1x1 convs (51M and more) stay on the tensor cores.
inline constexpr int64_t kPointwiseMaxFmas = int64_t{32} << 20;
// pointwise_conv.comp splits K over more invocations of a workgroup until
// the grid has this many workgroups (two per multiprocessor of an H100), a
// slice would get fewer than 4 k, or 64 slices.
inline constexpr int64_t kPointwiseWorkgroups = 264;

// Whether the conv `p` describes runs pointwise_conv.comp: a 1x1 conv of
// one group, stride 1 and no padding (or a linear layer) of at most
// kPointwiseMaxFmas multiply-adds.
bool pointwise_fits(const ConvPush& p);

// The push constants of the conv `p` (epilogue packed).
PointwisePush pointwise_push(const ConvPush& p, bool has_bias, bool has_residual);
// K slices per output quad, and the workgroups of the dispatch.
uint32_t pointwise_slices(const PointwisePush& q);
std::array<uint32_t, 3> pointwise_workgroups(const PointwisePush& q, uint32_t slices);

// W as the shader reads it: [k][out channels rounded up to 4], zero padded;
// weight(oc, k) is the conv's weight (any folded scale applied).
template <class WeightAt>
std::vector<float> pointwise_weights(const ConvPush& p, WeightAt weight) {
  const uint32_t quads = (p.out_channels + 3) / 4;
  std::vector<float> arranged(static_cast<size_t>(p.channels) * quads * 4, 0.f);
  for (int64_t k = 0; k < int64_t{p.channels}; ++k)
    for (int64_t oc = 0; oc < int64_t{p.out_channels}; ++oc)
      arranged[static_cast<size_t>(k * quads * 4 + oc)] = weight(oc, k);
  return arranged;
}

}  // namespace hetsched::gpu
