#include "shared_gpu/precision.h"

#include <algorithm>

#include "shared_gpu/device_info.h"
#include "shared_gpu/shared_gpu_context.h"

namespace hetsched {

Status check_precision(const std::string& value) {
  if (std::find(std::begin(kGpuPrecisions), std::end(kGpuPrecisions), value) != std::end(kGpuPrecisions))
    return Status::ok();
  return invalid_argument("option precision is '" + value + "' (accepted: fp32, fp16, auto)");
}

Status check_storage(const std::string& value) {
  if (std::find(std::begin(kGpuStorages), std::end(kGpuStorages), value) != std::end(kGpuStorages))
    return Status::ok();
  return invalid_argument("option storage is '" + value + "' (accepted: auto, fp32, fp16)");
}

Result<bool> resolve_storage(const std::string& storage, const SharedGpuContext& context) {
  if (storage != "fp16") return false;  // fp32, auto (precision.h says why)
  if (!context.features().storage_buffer_16bit_access)
    return unsupported("storage fp16 needs storageBuffer16BitAccess, which device '" +
                       std::string(context.device_name()) + "' lacks (accepted there: auto, fp32)");
  return true;
}

Result<std::optional<gpu::CoopMatConv>> resolve_precision(const std::string& precision, const SharedGpuContext& context) {
  using gpu::CoopMatConv;
  if (precision == "fp32") return std::optional<CoopMatConv>();
  std::string lacks;
  const CoopMatShape* shape = pick_f16_coopmat_shape(context.cooperative_matrix_shapes());
  if (!context.features().cooperative_matrix_nv) {
    lacks = "VK_NV_cooperative_matrix";
  } else if (shape == nullptr) {
    lacks = "an f16*f16+f32->f32 subgroup shape with m, n dividing 64 and k dividing 16";
  } else if (!context.features().shader_float16) {
    lacks = "shaderFloat16";
  } else if (context.subgroup_size() == 0 || 256 % context.subgroup_size() != 0) {
    lacks = "a subgroup size dividing 256 (it has " + std::to_string(context.subgroup_size()) + ")";
  }
  if (!lacks.empty()) {
    if (precision == "auto") return std::optional<CoopMatConv>();
    return unsupported("precision fp16 needs tensor-core products (" + lacks + "), which device '" +
                       std::string(context.device_name()) + "' lacks (accepted there: fp32, auto)");
  }
  return std::optional<CoopMatConv>(CoopMatConv{shape->m, shape->n, shape->k, context.subgroup_size(),
                                                context.limits().maxComputeWorkGroupInvocations,
                                                context.limits().maxComputeSharedMemorySize});
}

}  // namespace hetsched
