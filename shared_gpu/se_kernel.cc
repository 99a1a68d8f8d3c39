#include "shared_gpu/se_kernel.h"

// The generated arrays are `inline constexpr` at namespace scope, named by
// file stem: wrapped in a namespace of their own (conv_kernel.cc says why).
namespace hetsched::gpu::spirv {
#include "shared_gpu/shaders/se_scale_half_spv.h"
#include "shared_gpu/shaders/se_scale_spv.h"
}  // namespace hetsched::gpu::spirv

namespace hetsched::gpu {

std::span<const uint32_t> se_scale_spirv(bool half) {
  return half ? std::span<const uint32_t>(spirv::kSeScaleHalfSpv) : spirv::kSeScaleSpv;
}

bool se_scale_fits(int64_t channels, int64_t squeeze) {
  return squeeze <= int64_t{kSeScaleMaxSqueeze} && channels * squeeze <= int64_t{kSeScaleMaxWeights};
}

}  // namespace hetsched::gpu
