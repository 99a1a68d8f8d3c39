// Creating a VkInstance the way every hetsched context needs it.
#pragma once

#include <volk.h>

#include <string>

#include "hetsched/status.h"
#include "shared_gpu/validation.h"

namespace hetsched {

// The Vulkan version hetsched needs from the loader and the device: 1.2 makes
// timeline semaphores (vkWaitSemaphores, VkTimelineSemaphoreSubmitInfo) core.
inline constexpr uint32_t kMinVulkanVersion = VK_API_VERSION_1_2;

struct InstanceOptions {
  std::string app_name = "hetsched";
  // Enables VK_LAYER_KHRONOS_validation and VK_EXT_debug_utils. kUnavailable
  // (naming vulkan-validationlayers) when the layer is missing. With it
  // comes the layer's synchronization validation (VK_EXT_validation_features,
  // where the layer offers it): a missing barrier between two dispatches
  // (shared_gpu/barrier_plan.h) is a SYNC-HAZARD-* message, where plain
  // validation, and lavapipe's in-order results, would miss it. Unless
  // HETSCHED_VK_SYNC_VALIDATION=0 (validation.h).
  bool enable_validation = false;
  // Receives messages emitted during vkCreateInstance (and, since the info is
  // kept by the loader, vkDestroyInstance). Not retained beyond the
  // instance's life; must outlive it. Only used with enable_validation.
  ValidationLog* validation_log = nullptr;
};

// Loads Vulkan (load_vulkan_loader), creates an instance for the highest of
// 1.2/1.3 the loader offers, and loads the instance entry points. The caller
// owns the instance (vkDestroyInstance).
// Errors: kUnavailable when there is no loader or no driver (naming
// mesa-vulkan-drivers for lavapipe); kUnsupported when the loader is older
// than Vulkan 1.2.
Result<VkInstance> create_vulkan_instance(const InstanceOptions& options);

}  // namespace hetsched
