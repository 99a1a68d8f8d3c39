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
}  // namespace hetsched::vulkan::spirv

namespace hetsched::vulkan {

namespace {

std::span<const uint32_t> spirv_of(Kernel kernel) {
  switch (kernel) {
    case Kernel::kElementwise: return spirv::kElementwiseSpv;
    case Kernel::kGemm: return spirv::kGemmSpv;
    // Shared with the VGF runtime (shared_gpu/conv_kernel.h).
    case Kernel::kConv2d: return gpu::conv2d_spirv();
    case Kernel::kConv2dReduce: return gpu::conv2d_reduce_spirv();
    case Kernel::kDepthwiseConv2d: return gpu::depthwise_conv2d_spirv();
    case Kernel::kPool2d: return spirv::kPool2dSpv;
    case Kernel::kReduce: return spirv::kReduceSpv;
    case Kernel::kSoftmax: return spirv::kSoftmaxSpv;
    case Kernel::kStridedCopy: return spirv::kStridedCopySpv;
    case Kernel::kGather: return spirv::kGatherSpv;
    case Kernel::kResize: return spirv::kResizeSpv;
    case Kernel::kNormalize: return spirv::kNormalizeSpv;
    case Kernel::kPad: return spirv::kPadSpv;
    case Kernel::kConvTranspose2d: return spirv::kConvTranspose2dSpv;
    case Kernel::kCastF16ToF32: return spirv::kCastF16ToF32Spv;
    case Kernel::kCastF32ToF16: return spirv::kCastF32ToF16Spv;
    case Kernel::kConv2dCoopmat: return gpu::conv2d_coopmat_spirv();
    case Kernel::kGemmCoopmat: return spirv::kGemmCoopmatSpv;
    case Kernel::kGemmCoopmat512: return spirv::kGemmCoopmat512Spv;
    case Kernel::kGemmCoopmat1024: return spirv::kGemmCoopmat1024Spv;
    case Kernel::kCastWords: return spirv::kCastWordsSpv;
    case Kernel::kCastToBool: return spirv::kCastToBoolSpv;
    case Kernel::kCastFromBool: return spirv::kCastFromBoolSpv;
  }
  return {};
}

}  // namespace

Result<const ComputePipeline*> KernelLibrary::pipeline(Kernel kernel, const std::vector<uint32_t>& specialization) {
  std::lock_guard lock(mutex_);
  std::unique_ptr<ComputePipeline>& slot = pipelines_[Key(kernel, specialization)];
  if (!slot) {
    ComputePipelineDesc desc;
    desc.name = std::string(kernel_name(kernel));
    desc.spirv = spirv_of(kernel);
    desc.storage_buffer_count = kernel_binding_count(kernel);
    desc.push_constant_size = kernel_push_constant_size(kernel);
    desc.specialization_constants = specialization;
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
