#include "shared_gpu/vk_loader.h"

#include <mutex>

#include "shared_gpu/vk_check.h"

namespace hetsched {

Status load_vulkan_loader() {
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    const VkResult result = volkInitialize();
    if (result != VK_SUCCESS) {
      status = unavailable(
          "failed to load Vulkan: no Vulkan loader (libvulkan.so.1) found; install libvulkan1, and "
          "mesa-vulkan-drivers for the lavapipe CPU implementation");
    }
  });
  return status;
}

void load_vulkan_instance(VkInstance instance) {
  static std::once_flag once;
  std::call_once(once, [instance] { volkLoadInstance(instance); });
}

TimelineSemaphore::Functions volk_timeline_functions() {
  TimelineSemaphore::Functions fn;
  fn.create_semaphore = vkCreateSemaphore;
  fn.destroy_semaphore = vkDestroySemaphore;
  fn.wait_semaphores = vkWaitSemaphores;
  fn.signal_semaphore = vkSignalSemaphore;
  fn.get_semaphore_counter_value = vkGetSemaphoreCounterValue;
  return fn;
}

std::string format_vk_version(uint32_t version) {
  return std::to_string(VK_API_VERSION_MAJOR(version)) + "." + std::to_string(VK_API_VERSION_MINOR(version)) + "." +
         std::to_string(VK_API_VERSION_PATCH(version));
}

}  // namespace hetsched
