// register_vulkan_device (include/hetsched/vulkan.h): the host's handles
// wrapped as a borrowed SharedGpuContext in the process-wide registry.
#include "hetsched/vulkan.h"

#include "api/model_impl.h"
#include "shared_gpu/shared_gpu_context.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "shared_gpu/vk_loader.h"

namespace hetsched {

Status register_vulkan_device(const std::string& token, int64_t group, const HostVulkanDevice& device) {
  const std::string key = make_context_key(token, group);
  const std::pair<const void*, const char*> handles[] = {{device.instance, "instance"},
                                                         {device.physical_device, "physical_device"},
                                                         {device.device, "device"},
                                                         {device.queue, "queue"}};
  for (const auto& [handle, name] : handles)
    if (handle == nullptr)
      return invalid_argument("failed to register Vulkan device '" + key + "': " + name + " is VK_NULL_HANDLE");
  HS_RETURN_IF_ERROR(load_vulkan_loader());
  SharedGpuContextCreateInfo info;
  info.instance = device.instance;
  info.physical_device = device.physical_device;
  info.device = device.device;
  info.queue = device.queue;
  info.queue_family_index = device.queue_family_index;
  info.timeline_semaphore = device.timeline_semaphore;
  info.enabled_device_extensions = device.enabled_device_extensions;
  Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::borrow(info);
  if (!context.is_ok()) return context.status().with_context("failed to register Vulkan device '" + key + "': ");
  return SharedGpuContextRegistry::get().register_context(key, std::move(*context));
}

Status unregister_vulkan_device(const std::string& token, int64_t group) {
  const std::string key = make_context_key(token, group);
  if (!SharedGpuContextRegistry::get().unregister(key))
    return not_found("failed to unregister Vulkan device '" + key + "': nothing is registered under it");
  return Status::ok();
}

Status run_on_vulkan_buffers(Model& model, const std::vector<VulkanBufferRange>& inputs,
                             const std::vector<VulkanBufferRange>& outputs, const GpuRunSync& sync, GpuRunInfo* info,
                             const RunOptions& options) {
  DeviceRunRequest request;
  for (const VulkanBufferRange& in : inputs) request.inputs.push_back({in.buffer, in.offset, in.size});
  for (const VulkanBufferRange& out : outputs) request.outputs.push_back({out.buffer, out.offset, out.size});
  if (sync.wait_semaphore) {
    request.wait = {sync.wait_semaphore, sync.wait_value};
  } else {
    request.timeline_wait = sync.wait_value;
  }
  request.signal = {sync.signal_semaphore, sync.signal_value};
  std::vector<size_t> input_bytes;
  for (const VulkanBufferRange& in : inputs) input_bytes.push_back(static_cast<size_t>(in.size));
  HS_ASSIGN_OR_RETURN(const Model::Impl::Variant* variant, model.impl_->pick(input_bytes, options));
  RunStats stats;
  HS_ASSIGN_OR_RETURN(const uint64_t value,
                      variant->session->run_device(request, info || options.trace ? &stats : nullptr));
  if (info) {
    info->run = info_of(stats, options.trace);
    info->timeline_value = value;
  }
  return Status::ok();
}

}  // namespace hetsched
