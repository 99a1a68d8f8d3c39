#include "shared_gpu/vk_loader.h"

#include <dlfcn.h>

#include <mutex>

#include "shared_gpu/vk_check.h"

namespace hetsched {

namespace {

// The library volk opened (dlopen with RTLD_NOLOAD finds it, adding a reference).
void* g_loader_library = nullptr;
// libvulkan's own vkGetInstanceProcAddr, for what the library does not export.
PFN_vkGetInstanceProcAddr g_loader_gipa = nullptr;

// What volk (and anyone calling vkGetInstanceProcAddr through it) gets: the
// loader's exported trampoline when there is one, whatever `instance` is, so
// no pointer depends on an instance; else the loader's answer for `instance`
// (extension entry points, global commands).
PFN_vkVoidFunction VKAPI_PTR instance_independent_proc_addr(VkInstance instance, const char* name) {
  if (void* exported = dlsym(g_loader_library, name)) return reinterpret_cast<PFN_vkVoidFunction>(exported);
  return g_loader_gipa(instance, name);
}

}  // namespace

Status load_vulkan_loader() {
  static std::once_flag once;
  static Status status;
  std::call_once(once, [] {
    const VkResult result = volkInitialize();
    if (result == VK_SUCCESS) {
      for (const char* name : {"libvulkan.so.1", "libvulkan.so"})
        if (!g_loader_library) g_loader_library = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    }
    if (result != VK_SUCCESS || !g_loader_library) {
      status = unavailable(
          "failed to load Vulkan: no Vulkan loader (libvulkan.so.1) found; install libvulkan1, and "
          "mesa-vulkan-drivers for the lavapipe CPU implementation");
      return;
    }
    g_loader_gipa = vkGetInstanceProcAddr;
    volkInitializeCustom(&instance_independent_proc_addr);
    // No instance: every instance- and device-level pointer volk holds is the
    // exported trampoline, or null for extensions (see vk_loader.h).
    volkLoadInstance(VK_NULL_HANDLE);
  });
  return status;
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
