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

// kInvalidArgument naming `value` and the accepted ones unless it is one of kGpuPrecisions.
Status check_precision(const std::string& value);

// The tensor-core configuration `precision` asks for on `context`: nullopt
// for f32. fp16 on a device without f16 cooperative matrices is refused by
// reason (kUnsupported); auto falls back to f32 there.
Result<std::optional<gpu::CoopMatConv>> resolve_precision(const std::string& precision, const SharedGpuContext& context);

}  // namespace hetsched
