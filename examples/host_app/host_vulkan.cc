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
      VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
      pci.queueFamilyIndex = f;
      vkCreateCommandPool(device, &pci, nullptr, &pool);
      return {};
    }
  }
  return "no Vulkan 1.2 device with a compute queue";
}

void HostVulkan::destroy() {
  if (device) {
    vkDeviceWaitIdle(device);
    if (pool) vkDestroyCommandPool(device, pool, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  if (instance) vkDestroyInstance(instance, nullptr);
  device = VK_NULL_HANDLE;
  instance = VK_NULL_HANDLE;
}

HostVulkan::Buffer HostVulkan::make_buffer(VkDeviceSize size, bool host_visible) {
  Buffer b;
  b.size = size;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = size;
  bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  vkCreateBuffer(device, &bci, nullptr, &b.buffer);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(physical_device, &mp);
  const VkMemoryPropertyFlags want = host_visible
                                         ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                         : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) {
      mai.memoryTypeIndex = i;
      break;
    }
  vkAllocateMemory(device, &mai, nullptr, &b.memory);
  vkBindBufferMemory(device, b.buffer, b.memory, 0);
  if (host_visible) vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped);
  return b;
}

void HostVulkan::free_buffer(Buffer& b) {
  vkDestroyBuffer(device, b.buffer, nullptr);
  vkFreeMemory(device, b.memory, nullptr);  // unmaps too
  b = {};
}

VkSemaphore HostVulkan::make_timeline() {
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo sci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sci.pNext = &type;
  VkSemaphore s = VK_NULL_HANDLE;
  vkCreateSemaphore(device, &sci, nullptr, &s);
  return s;
}

bool HostVulkan::copy(const Buffer& src, const Buffer& dst, VkSemaphore wait, uint64_t wait_value, VkSemaphore signal,
                      uint64_t signal_value) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  vkAllocateCommandBuffers(device, &cai, &cmd);  // freed with the pool
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(cmd, &begin);
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       0, 1, &barrier, 0, nullptr, 0, nullptr);
  const VkBufferCopy region{0, 0, src.size};
  vkCmdCopyBuffer(cmd, src.buffer, dst.buffer, 1, &region);
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       0, 1, &barrier, 0, nullptr, 0, nullptr);
  vkEndCommandBuffer(cmd);
  const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkTimelineSemaphoreSubmitInfo tsi{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  tsi.waitSemaphoreValueCount = wait ? 1 : 0;
  tsi.pWaitSemaphoreValues = &wait_value;
  tsi.signalSemaphoreValueCount = 1;
  tsi.pSignalSemaphoreValues = &signal_value;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &tsi;
  si.waitSemaphoreCount = wait ? 1 : 0;
  si.pWaitSemaphores = &wait;
  si.pWaitDstStageMask = &stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &signal;
  return vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE) == VK_SUCCESS;
}

bool HostVulkan::wait(VkSemaphore semaphore, uint64_t value) {
  VkSemaphoreWaitInfo wi{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  wi.semaphoreCount = 1;
  wi.pSemaphores = &semaphore;
  wi.pValues = &value;
  return vkWaitSemaphores(device, &wi, 60'000'000'000ull) == VK_SUCCESS;
}
