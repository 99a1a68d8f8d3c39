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

  // The host's own GPU buffers and work, for a frame that goes GPU → hetsched → GPU.
  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;  // host-visible ones
    VkDeviceSize size = 0;
  };
  Buffer make_buffer(VkDeviceSize size, bool host_visible);
  void free_buffer(Buffer& b);
  VkSemaphore make_timeline();
  // Copies src into dst on the GPU after `wait` reaches wait_value, then signals `signal` to signal_value.
  bool copy(const Buffer& src, const Buffer& dst, VkSemaphore wait, uint64_t wait_value, VkSemaphore signal,
            uint64_t signal_value);
  bool wait(VkSemaphore semaphore, uint64_t value);
  VkCommandPool pool = VK_NULL_HANDLE;
};
