// The host application's own Vulkan instance, device and compute queue
// (Vulkan 1.2, timeline semaphores on), as a game engine or camera pipeline
// would have made them before loading hetsched. Destroyed by the host.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

struct HostVulkan {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  std::string device_name;

  // Empty on success, else why there is no device (no driver, no 1.2 GPU).
  std::string create();
  void destroy();
};
