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

#include "hetsched/hetsched.h"
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

// GPU buffers in and out: a frame goes GPU → hetsched → GPU without passing
// through host memory.
//
// `size` bytes of a host-owned VkBuffer on the registered device, from
// `offset`: an input needs VK_BUFFER_USAGE_TRANSFER_SRC_BIT, an output
// VK_BUFFER_USAGE_TRANSFER_DST_BIT. Row-major and dense, like the host views.
struct VulkanBufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
};

// How a GPU run joins the host's own GPU work.
struct GpuRunSync {
  // hetsched's copies of the inputs wait on the device until this timeline
  // semaphore of the registered device reaches wait_value (the host's
  // producer signals it). With a null semaphore, wait_value (if not 0) is a
  // value on the registered context's timeline semaphore.
  VkSemaphore wait_semaphore = VK_NULL_HANDLE;
  uint64_t wait_value = 0;
  // Set to signal_value on the device once the outputs are written (null:
  // none). Another semaphore than the registered timeline, which hetsched
  // signals with values of its own.
  VkSemaphore signal_semaphore = VK_NULL_HANDLE;
  uint64_t signal_value = 0;
};

struct GpuRunInfo {
  RunInfo run;
  // The value of the registered context's timeline semaphore signalled once
  // the outputs were written.
  uint64_t timeline_value = 0;
};

// One request whose inputs and outputs are the host's GPU buffers, in
// inputs() / outputs() order: hetsched copies each input on the GPU
// (vkCmdCopyBuffer) into its first island's memory and each output from its
// last island's memory into the host's buffer; nothing is uploaded from or
// read back to host memory. Returns once the outputs are written (hetsched
// waited on the host for its own GPU work), after submitting the signal.
// Only for models whose inputs are read and outputs written by GPU islands
// of one context: kFailedPrecondition otherwise, saying which tensor is on
// the host ("failed to run on GPU buffers: 'x' is read by island 0 (cpu) on
// the host"); kInvalidArgument for a null buffer or a size that is not the
// tensor's. When it fails, nothing is signalled. Thread-safe, like Model::run.
Status run_on_vulkan_buffers(Model& model, const std::vector<VulkanBufferRange>& inputs,
                             const std::vector<VulkanBufferRange>& outputs, const GpuRunSync& sync = {},
                             GpuRunInfo* info = nullptr, const RunOptions& options = {});

}  // namespace hetsched
