// A host application's own Vulkan instance and device, made by a test the
// way an embedder makes them (not through hetsched's SharedGpuContext):
// Vulkan 1.2 with timeline semaphores, VK_LAYER_KHRONOS_validation on and a
// messenger that counts into a ValidationLog, which outlives the instance
// so that vkDestroyDevice/vkDestroyInstance reports of objects left behind
// (by hetsched or the test) are counted too. Calls go through volk, which
// load_vulkan_loader() fills with the loader's exported trampolines.
// Header-only (test/CMakeLists compiles only test_util.cc beside each test).
#pragma once

#include <volk.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "shared_gpu/validation.h"
#include "shared_gpu/vk_loader.h"

namespace hetsched::testing {

class HostVulkanDeviceForTest {
 public:
  // A buffer of the host's, bound to its own memory; `mapped` when host-visible.
  struct HostBuffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    VkDeviceSize size = 0;
  };

  // Empty on success, else why (no loader, no validation layer, no device).
  std::string create(const char* app_name) {
    if (Status s = load_vulkan_loader(); !s.is_ok()) return s.message();
    if (!validation_layer_available()) return "no validation layer";
    const char* layers[] = {kValidationLayerName};
    const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkApplicationInfo app{};
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = app_name;
    app.apiVersion = VK_API_VERSION_1_2;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = validation_messenger_info(log.get());
    VkInstanceCreateInfo ici{};
    ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ici.pNext = &messenger_info;
    ici.pApplicationInfo = &app;
    ici.enabledLayerCount = 1;
    ici.ppEnabledLayerNames = layers;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = extensions;
    if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) return "vkCreateInstance failed";
    Result<DebugMessenger> m = DebugMessenger::create(instance, log.get());
    if (!m.is_ok()) return m.status().message();
    messenger = std::move(m).value();
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
        VkDeviceQueueCreateInfo qci{};
        qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
        qci.queueFamilyIndex = f;
        qci.queueCount = 1;
        qci.pQueuePriorities = &priority;
        VkPhysicalDeviceVulkan12Features v12{};
        v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
        v12.timelineSemaphore = VK_TRUE;
        VkDeviceCreateInfo dci{};
        dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
        dci.pNext = &v12;
        dci.queueCreateInfoCount = 1;
        dci.pQueueCreateInfos = &qci;
        if (vkCreateDevice(pd, &dci, nullptr, &device) != VK_SUCCESS) continue;
        physical_device = pd;
        queue_family = f;
        vkGetDeviceQueue(device, f, 0, &queue);
        VkCommandPoolCreateInfo pci{};
        pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
        pci.queueFamilyIndex = f;
        vkCreateCommandPool(device, &pci, nullptr, &pool);
        return {};
      }
    }
    return "no Vulkan 1.2 device with a compute queue";
  }

  // `storage`: also a storage buffer, as a buffer hetsched permutes from or
  // into (a VGF island's NHWC tensor) must be.
  HostBuffer make_buffer(VkDeviceSize size, bool host_visible, bool storage = false) {
    HostBuffer b;
    b.size = size;
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                (storage ? VkBufferUsageFlags{VK_BUFFER_USAGE_STORAGE_BUFFER_BIT} : VkBufferUsageFlags{0});
    vkCreateBuffer(device, &bci, nullptr, &b.buffer);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(physical_device, &mp);
    const VkMemoryPropertyFlags want = host_visible
                                           ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                           : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
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

  void free_buffer(HostBuffer& b) {
    if (b.mapped) vkUnmapMemory(device, b.memory);
    vkDestroyBuffer(device, b.buffer, nullptr);
    vkFreeMemory(device, b.memory, nullptr);
    b = {};
  }

  VkSemaphore make_timeline() {
    VkSemaphoreTypeCreateInfo type{};
    type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci{};
    sci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    sci.pNext = &type;
    VkSemaphore s = VK_NULL_HANDLE;
    vkCreateSemaphore(device, &sci, nullptr, &s);
    return s;
  }

  // The host's own GPU work: copies `src` into `dst` on the queue, after
  // `wait` reaches `wait_value` (null: no wait), then signals `signal` to
  // `signal_value` (null: none). Returns at once; the command buffer is
  // freed by destroy().
  VkResult copy(const HostBuffer& src, const HostBuffer& dst, VkSemaphore wait, uint64_t wait_value,
                VkSemaphore signal, uint64_t signal_value) {
    VkCommandBufferAllocateInfo cai{};
    cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    vkAllocateCommandBuffers(device, &cai, &cmd);
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    vkBeginCommandBuffer(cmd, &begin);
    VkMemoryBarrier barrier{};
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    const VkBufferCopy region{0, 0, src.size};
    vkCmdCopyBuffer(cmd, src.buffer, dst.buffer, 1, &region);
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         0, 1, &barrier, 0, nullptr, 0, nullptr);
    vkEndCommandBuffer(cmd);
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkTimelineSemaphoreSubmitInfo tsi{};
    tsi.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    tsi.waitSemaphoreValueCount = wait ? 1 : 0;
    tsi.pWaitSemaphoreValues = &wait_value;
    tsi.signalSemaphoreValueCount = signal ? 1 : 0;
    tsi.pSignalSemaphoreValues = &signal_value;
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.pNext = &tsi;
    si.waitSemaphoreCount = wait ? 1 : 0;
    si.pWaitSemaphores = &wait;
    si.pWaitDstStageMask = &stage;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    si.signalSemaphoreCount = signal ? 1 : 0;
    si.pSignalSemaphores = &signal;
    return vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE);
  }

  VkResult wait(VkSemaphore semaphore, uint64_t value) {
    VkSemaphoreWaitInfo wi{};
    wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    wi.semaphoreCount = 1;
    wi.pSemaphores = &semaphore;
    wi.pValues = &value;
    return vkWaitSemaphores(device, &wi, 60'000'000'000ull);
  }

  // Destroys the device and the instance (once, by their owner).
  void destroy() {
    if (device) {
      vkDeviceWaitIdle(device);
      if (pool) vkDestroyCommandPool(device, pool, nullptr);
      vkDestroyDevice(device, nullptr);
    }
    messenger.reset();
    if (instance) vkDestroyInstance(instance, nullptr);
    device = VK_NULL_HANDLE;
    instance = VK_NULL_HANDLE;
    pool = VK_NULL_HANDLE;
  }

  // Validation messages (warnings and errors) so far, one a line.
  std::string messages() const {
    std::string out;
    for (const std::string& m : log->messages()) out += m + "\n";
    return out;
  }

  std::shared_ptr<ValidationLog> log = std::make_shared<ValidationLog>();
  VkInstance instance = VK_NULL_HANDLE;
  DebugMessenger messenger;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
};

}  // namespace hetsched::testing
