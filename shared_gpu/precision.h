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
// storageBuffer16BitAccess); auto: fp32, on every device measured. On an
// H200 f16 storage made no model clearly faster (fp32 models at precision
// fp16: ResNet-50 3% faster, MobileNetV3, EfficientNet and RegNetY 3-5%
// slower; PP-OCRv4 det fp16 4% faster at 640x640, equal at 1280x1280)
// while its rounding of every stored tensor put det's probabilities 2.8e-2
// off a page's (4.9e-4 with f32 between kernels): opt in where memory
// traffic, not latency, bounds a device.
inline constexpr std::string_view kGpuStorages[] = {"auto", "fp32", "fp16"};

// kInvalidArgument naming `value` and the accepted ones unless it is one of kGpuPrecisions.
Status check_precision(const std::string& value);

// kInvalidArgument naming `value` and the accepted ones unless it is one of kGpuStorages.
Status check_storage(const std::string& value);

// Whether `storage` stores the tensors between kernels as f16 on
// `context`. fp16 on a device without storageBuffer16BitAccess is refused
// by reason (kUnsupported).
Result<bool> resolve_storage(const std::string& storage, const SharedGpuContext& context);

// The tensor-core configuration `precision` asks for on `context`: nullopt
// for f32. fp16 on a device without f16 cooperative matrices is refused by
// reason (kUnsupported); auto falls back to f32 there.
Result<std::optional<gpu::CoopMatConv>> resolve_precision(const std::string& precision, const SharedGpuContext& context);

}  // namespace hetsched
