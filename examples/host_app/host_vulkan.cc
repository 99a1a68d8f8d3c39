#include "host_vulkan.h"

#include <vector>

std::string HostVulkan::create() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "host_app";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) return "vkCreateInstance failed (no Vulkan driver?)";
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance, &count, devices.data());
  for (VkPhysicalDevice pd : devices) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    if (props.apiVersion < VK_API_VERSION_1_2) continue;
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &families, nullptr);
    std::vector<VkQueueFamilyProperties> fp(families);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &families, fp.data());
    for (uint32_t f = 0; f < families; ++f) {
      if (!(fp[f].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
      const float priority = 1.0f;
      VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
      qci.queueFamilyIndex = f;
      qci.queueCount = 1;
      qci.pQueuePriorities = &priority;
      VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
      v12.timelineSemaphore = VK_TRUE;
      VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
      dci.pNext = &v12;
      dci.queueCreateInfoCount = 1;
      dci.pQueueCreateInfos = &qci;
      if (vkCreateDevice(pd, &dci, nullptr, &device) != VK_SUCCESS) continue;
      physical_device = pd;
      queue_family = f;
      device_name = props.deviceName;
      vkGetDeviceQueue(device, f, 0, &queue);
      return {};
    }
  }
  return "no Vulkan 1.2 device with a compute queue";
}

void HostVulkan::destroy() {
  if (device) {
    vkDeviceWaitIdle(device);
    vkDestroyDevice(device, nullptr);
  }
  if (instance) vkDestroyInstance(instance, nullptr);
  device = VK_NULL_HANDLE;
  instance = VK_NULL_HANDLE;
}
