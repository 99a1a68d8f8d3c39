#include "delegates/vulkan/kernel_library.h"

#include <cstdint>
#include <span>
#include <string>

#include "shared_gpu/conv_kernel.h"

// The generated arrays are `inline constexpr` at namespace scope. Another
// delegate may embed a shader of the same file name (and so the same array
// name) with different contents, which would break the one-definition rule;
// wrapping the includes in a namespace keeps these arrays apart. <cstdint>
// is included first so the generated headers' own include of it is a no-op.
namespace hetsched::vulkan::spirv {
#include "delegates/vulkan/shaders/cast_f16_to_f32_spv.h"
#include "delegates/vulkan/shaders/cast_f32_to_f16_spv.h"
#include "delegates/vulkan/shaders/cast_from_bool_spv.h"
#include "delegates/vulkan/shaders/cast_to_bool_spv.h"
#include "delegates/vulkan/shaders/cast_words_spv.h"
#include "delegates/vulkan/shaders/conv_transpose2d_spv.h"
#include "delegates/vulkan/shaders/elementwise_spv.h"
#include "delegates/vulkan/shaders/gather_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_1024_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_128x128_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_128x256_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_512_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_spv.h"
#include "delegates/vulkan/shaders/gemm_spv.h"
#include "delegates/vulkan/shaders/normalize_spv.h"
#include "delegates/vulkan/shaders/pad_spv.h"
#include "delegates/vulkan/shaders/pool2d_spv.h"
#include "delegates/vulkan/shaders/reduce_spv.h"
#include "delegates/vulkan/shaders/resize_spv.h"
#include "delegates/vulkan/shaders/softmax_spv.h"
#include "delegates/vulkan/shaders/strided_copy_spv.h"
#include "delegates/vulkan/shaders/expand_depthwise_spv.h"
#include "delegates/vulkan/shaders/expand_depthwise_half_spv.h"
#include "delegates/vulkan/shaders/conv_transpose2d_half_spv.h"
#include "delegates/vulkan/shaders/elementwise_half_spv.h"
#include "delegates/vulkan/shaders/gather_half_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_1024_half_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_128x128_half_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_128x256_half_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_512_half_spv.h"
#include "delegates/vulkan/shaders/gemm_coopmat_half_spv.h"
#include "delegates/vulkan/shaders/gemm_half_spv.h"
#include "delegates/vulkan/shaders/normalize_half_spv.h"
#include "delegates/vulkan/shaders/pad_half_spv.h"
#include "delegates/vulkan/shaders/pool2d_half_spv.h"
#include "delegates/vulkan/shaders/reduce_half_spv.h"
#include "delegates/vulkan/shaders/resize_half_spv.h"
#include "delegates/vulkan/shaders/softmax_half_spv.h"
#include "delegates/vulkan/shaders/strided_copy_half_spv.h"
}  // namespace hetsched::vulkan::spirv

namespace hetsched::vulkan {

namespace {

// `half`: the kernel's variant with 16-bit storage between kernels
// (kernel_has_half_variant).
std::span<const uint32_t> spirv_of(Kernel kernel, bool half) {
#define HS_SPIRV(Name) (half ? std::span<const uint32_t>(spirv::k##Name##HalfSpv) : spirv::k##Name##Spv)
  switch (kernel) {
    case Kernel::kElementwise: return HS_SPIRV(Elementwise);
    case Kernel::kGemm: return HS_SPIRV(Gemm);
    // Shared with the VGF runtime (shared_gpu/conv_kernel.h).
    case Kernel::kConv2d: return gpu::conv2d_spirv(half);
    case Kernel::kConv2dReduce: return gpu::conv2d_reduce_spirv(half);
    case Kernel::kDepthwiseConv2d: return gpu::depthwise_conv2d_spirv(half);
    case Kernel::kPool2d: return HS_SPIRV(Pool2d);
    case Kernel::kReduce: return HS_SPIRV(Reduce);
    case Kernel::kSoftmax: return HS_SPIRV(Softmax);
    case Kernel::kStridedCopy: return HS_SPIRV(StridedCopy);
    case Kernel::kGather: return HS_SPIRV(Gather);
    case Kernel::kResize: return HS_SPIRV(Resize);
    case Kernel::kNormalize: return HS_SPIRV(Normalize);
    case Kernel::kPad: return HS_SPIRV(Pad);
    case Kernel::kConvTranspose2d: return HS_SPIRV(ConvTranspose2d);
    case Kernel::kConv2dCoopmat: return gpu::conv2d_coopmat_spirv(half);
    case Kernel::kGemmCoopmat: return HS_SPIRV(GemmCoopmat);
    case Kernel::kGemmCoopmat512: return HS_SPIRV(GemmCoopmat512);
    case Kernel::kGemmCoopmat1024: return HS_SPIRV(GemmCoopmat1024);
    case Kernel::kGemmCoopmat128x128: return HS_SPIRV(GemmCoopmat128x128);
    case Kernel::kGemmCoopmat128x256: return HS_SPIRV(GemmCoopmat128x256);
    case Kernel::kSeScale: return gpu::se_scale_spirv(half);
    case Kernel::kDepthwiseMean: return gpu::depthwise_mean_spirv(half);
    case Kernel::kPointwiseConv: return gpu::pointwise_conv_spirv(half);
    case Kernel::kExpandDepthwise: return HS_SPIRV(ExpandDepthwise);
    // The Casts read and write their own element types.
    case Kernel::kCastF16ToF32: return spirv::kCastF16ToF32Spv;
    case Kernel::kCastF32ToF16: return spirv::kCastF32ToF16Spv;
    case Kernel::kCastWords: return spirv::kCastWordsSpv;
    case Kernel::kCastToBool: return spirv::kCastToBoolSpv;
    case Kernel::kCastFromBool: return spirv::kCastFromBoolSpv;
  }
#undef HS_SPIRV
  return {};
}

}  // namespace

Result<const ComputePipeline*> KernelLibrary::pipeline(Kernel kernel, const std::vector<uint32_t>& specialization,
                                                       uint32_t half_bindings) {
  if (half_bindings != 0 && !kernel_has_half_variant(kernel))
    return internal_error("kernel '" + std::string(kernel_name(kernel)) + "' has no 16-bit storage variant");
  std::lock_guard lock(mutex_);
  std::unique_ptr<ComputePipeline>& slot = pipelines_[Key(kernel, specialization, half_bindings)];
  if (!slot) {
    ComputePipelineDesc desc;
    desc.name = std::string(kernel_name(kernel));
    desc.spirv = spirv_of(kernel, half_bindings != 0);
    desc.storage_buffer_count = kernel_binding_count(kernel);
    desc.push_constant_size = kernel_push_constant_size(kernel);
    desc.specialization_constants = specialization;
    desc.half_bindings = half_bindings;
    HS_ASSIGN_OR_RETURN(ComputePipeline made, ComputePipeline::create(*context_, desc));
    slot = std::make_unique<ComputePipeline>(std::move(made));
  }
  return slot.get();
}

size_t KernelLibrary::size() const {
  std::lock_guard lock(mutex_);
  return pipelines_.size();
}

}  // namespace hetsched::vulkan
