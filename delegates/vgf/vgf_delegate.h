// The VGF delegate: lowers islands to TOSA-style data graphs, packs them as
// VGF files (the compiled blob IS a VGF file, see vgf_format.h) and runs them
// on a Vulkan device shared with other GPU delegates.
//
// It is a backend of its own, with its own shaders (delegates/vgf/shaders),
// and shares only the runtime Vulkan objects of shared_gpu/ with the Vulkan
// delegate: at init() it resolves a SharedGpuContext through the
// SharedGpuContextRegistry by (gpu_shared_context_token,
// gpu_shared_group_id, gpu_shared_context_mode) and makes its own command
// pool on it. Its islands keep their inputs and outputs in device memory
// (NHWC for rank-4 tensors).
#pragma once

#include <memory>

#include "delegates/delegate.h"

namespace hetsched::vgf {

// Options (DelegateOptions keys):
//   device                      auto | device index | name substring (for a context it creates)
//   gpu_shared_context_token    default "default"
//   gpu_shared_group_id         default 0
//   gpu_shared_context_mode     lookup_only | lookup_or_create (default) | create_only | disabled
//   validation                  "1": enable VK_LAYER_KHRONOS_validation on a context it creates
// Errors: kInvalidArgument naming a malformed option. No GPU is touched
// before init().
Result<std::unique_ptr<Delegate>> make_vgf_delegate(const DelegateOptions& options);

}  // namespace hetsched::vgf
