// The conv tiling moved to shared_gpu/conv_tiling.h with the kernel it tiles
// (shared_gpu/shaders/conv2d.comp), which the VGF runtime runs too; these
// names keep the Vulkan delegate's spelling of it.
#pragma once

#include "shared_gpu/conv_tiling.h"

namespace hetsched::vulkan {

using gpu::choose_conv_tiling;
using gpu::clamp_conv_tiling;
using gpu::conv_k_steps;
using gpu::ConvGemmShape;
using gpu::ConvTiling;
using gpu::parse_conv_tiling;
using gpu::to_string;

}  // namespace hetsched::vulkan
