// The Vulkan compute delegate: runs islands of fp32 ops with GLSL compute
// shaders on a SharedGpuContext, keeping their tensors in device memory.
//
// compile() writes the island's sub-graph into a versioned blob
// (island_blob.h). init() resolves the context through the
// SharedGpuContextRegistry, makes the delegate's own command pool, lowers
// the graph to dispatches (lowering.h), uploads the weights once and records
// one command buffer (vulkan_island.h). execute() only submits it.
#pragma once

#include <memory>

#include "delegates/delegate.h"

namespace hetsched::vulkan {

// Options (all optional):
//   device                    "auto", a device index or a name substring (default auto)
//   gpu_shared_context_token  registry token (default "default")
//   gpu_shared_group_id       registry group, an integer (default 0)
//   gpu_shared_context_mode   lookup_only | lookup_or_create | create_only | disabled
//                             (default lookup_or_create)
//   gpu_shared_sync_mode      timeline | queue_wait_idle | none (default timeline;
//                             the executor plans the sync, this only validates it)
//   gpu_validation            1: VK_LAYER_KHRONOS_validation on contexts this
//                             delegate creates (HETSCHED_VK_VALIDATION=1 does too)
//   gpu_timestamps            1: islands time their command buffer on the GPU
//                             (VulkanIsland::last_gpu_seconds)
//   conv_tiling               "auto" (default: per shape, conv_tiling.h) or
//                             "<channels>x<pixels>/<splits>" for every Conv,
//                             e.g. "128x64/4" (benchmarks)
//   gemm_kernel               "auto" (default: per shape) or a gemm_coopmat
//                             kernel's name, e.g. "gemm_coopmat_128x256", for
//                             every fp16 MatMul and Gemm it can run (benchmarks)
// The same keys in InitContext::options override these at init.
// Errors: kInvalidArgument naming the option when a value does not parse.
// Making the delegate touches no GPU.
Result<std::unique_ptr<Delegate>> make_vulkan_delegate(const DelegateOptions& options);

}  // namespace hetsched::vulkan
