// A host application's own Vulkan device, lent to hetsched (the RFC's
// SharedGpuContextCreateInfo): register it under a (token, group) before
// loading a model, and name that key in the profile's shared_gpu with
// mode: lookup_only, so hetsched's GPU delegates run on the host's device and
// queue and make no device of their own:
//
//   hetsched::HostVulkanDevice dev{instance, physical_device, device, queue, family};
//   hetsched::register_vulkan_device("app", 0, dev);
//   // profile: delegates: {vulkan: {enabled: true, shared_gpu: {token: app, group: 0, mode: lookup_only}}}
//
// hetsched never destroys borrowed handles. The device must be Vulkan 1.2+
// with the timelineSemaphore feature enabled, and `queue` a queue of
// `queue_family_index` with compute support; hetsched takes the queue only
// through its own submits, so a host that submits to the same queue from
// another thread must not do so during a run. Only types come from
// <vulkan/vulkan_core.h>: this header links nothing.
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hetsched/status.h"

namespace hetsched {

struct HostVulkanDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;
  // A timeline semaphore of `device` for hetsched's steps to wait on and
  // signal, or VK_NULL_HANDLE for hetsched to make (and destroy) its own.
  VkSemaphore timeline_semaphore = VK_NULL_HANDLE;
  // The device extensions the host enabled (hetsched asks for none).
  std::vector<std::string> enabled_device_extensions;
};

// Registers `device` under "token:group". kAlreadyExists when the key is
// taken; kInvalidArgument naming the missing handle when one is null.
Status register_vulkan_device(const std::string& token, int64_t group, const HostVulkanDevice& device);
// Drops the registration. Models loaded on it keep using it (and hold it)
// until they are destroyed: the host keeps the handles alive until then.
// kNotFound when nothing is registered under the key.
Status unregister_vulkan_device(const std::string& token, int64_t group);

}  // namespace hetsched
