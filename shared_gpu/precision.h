// The `precision` option both GPU delegates take (docs/profiles.md): what
// convolutions and matrix products multiply in. fp32 on the CUDA-core
// style kernels; fp16 on the tensor cores (f16 operands, f32 sums) through
// VK_NV_cooperative_matrix; auto: fp16 where the device has that, else fp32.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hetsched/status.h"
#include "shared_gpu/conv_kernel.h"

namespace hetsched {

class SharedGpuContext;

inline constexpr std::string_view kGpuPrecisions[] = {"fp32", "fp16", "auto"};
// The `storage` option: the type of the tensors between a GPU delegate's
// kernels. fp32; fp16 (halves their bytes, arithmetic stays f32; needs
// storageBuffer16BitAccess); auto: fp16 where the model's tensors are f16
// (an fp16 model) on a device that has the feature, else fp32. An fp32
// model at precision fp16 keeps f32 under auto: on an H200 f16 storage made
// no model faster (ResNet-50 3% faster, MobileNetV3, EfficientNet and
// RegNetY 3-5% slower) and adds a rounding per stored tensor.
inline constexpr std::string_view kGpuStorages[] = {"auto", "fp32", "fp16"};

// kInvalidArgument naming `value` and the accepted ones unless it is one of kGpuPrecisions.
Status check_precision(const std::string& value);

// kInvalidArgument naming `value` and the accepted ones unless it is one of kGpuStorages.
Status check_storage(const std::string& value);

// Whether `storage` stores the tensors between kernels as f16 on
// `context`; `model_f16`: the island holds the f16 tensors of an fp16
// model. fp16 on a device without storageBuffer16BitAccess is refused by
// reason (kUnsupported).
Result<bool> resolve_storage(const std::string& storage, const SharedGpuContext& context, bool model_f16);

// The tensor-core configuration `precision` asks for on `context`: nullopt
// for f32. fp16 on a device without f16 cooperative matrices is refused by
// reason (kUnsupported); auto falls back to f32 there.
Result<std::optional<gpu::CoopMatConv>> resolve_precision(const std::string& precision, const SharedGpuContext& context);

}  // namespace hetsched
