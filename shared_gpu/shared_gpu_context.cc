#include "shared_gpu/shared_gpu_context.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "shared_gpu/instance.h"
#include "shared_gpu/vk_check.h"
#include "shared_gpu/vk_loader.h"
#include "sync/fault_injection.h"

namespace hetsched {

Result<std::shared_ptr<SharedGpuContext>> SharedGpuContext::create(const GpuContextOptions& options) {
  // Built up step by step: on any failure the partly made context is dropped
  // and its destructor releases whatever exists so far.
  std::shared_ptr<SharedGpuContext> context(new SharedGpuContext());
  const bool validation = options.enable_validation || validation_requested_by_env();
  if (validation) context->validation_log_ = std::make_shared<ValidationLog>();

  InstanceOptions instance_options;
  instance_options.app_name = options.app_name;
  instance_options.enable_validation = validation;
  instance_options.validation_log = context->validation_log_.get();
  HS_ASSIGN_OR_RETURN(context->instance_, create_vulkan_instance(instance_options));
  context->owns_instance_ = true;
  if (validation) {
    HS_ASSIGN_OR_RETURN(context->messenger_,
                        DebugMessenger::create(context->instance_, context->validation_log_.get()));
  }

  HS_ASSIGN_OR_RETURN(std::vector<VkPhysicalDevice> physical, list_physical_devices(context->instance_));
  std::vector<DeviceInfo> devices;
  for (size_t i = 0; i < physical.size(); ++i) {
    devices.push_back(inspect_device(context->instance_, physical[i], static_cast<uint32_t>(i)));
  }
  HS_ASSIGN_OR_RETURN(const uint32_t chosen, select_device(devices, options.device));
  context->physical_device_ = physical[chosen];
  HS_RETURN_IF_ERROR(context->create_device(devices[chosen], options));
  HS_RETURN_IF_ERROR(context->finish_setup());
  spdlog::info("[gpu] created context on device #{} '{}' (Vulkan {}, queue family {}, validation {})", chosen,
               context->device_name(), format_vk_version(context->properties_.apiVersion),
               context->queue_family_index_, validation ? "on" : "off");
  return context;
}

Status SharedGpuContext::create_device(const DeviceInfo& device, const GpuContextOptions& options) {
  std::vector<std::string> missing;
  for (const std::string& name : options.required_device_extensions) {
    if (device.has_extension(name)) {
      enabled_extensions_.push_back(name);
    } else {
      missing.push_back(name);
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& name : missing) list += (list.empty() ? "" : ", ") + name;
    return unsupported("failed to create Vulkan device on '" + device.name + "': missing required extensions " +
                       list);
  }
  for (const std::string& name : options.optional_device_extensions) {
    if (device.has_extension(name)) enabled_extensions_.push_back(name);
  }

  // Every feature hetsched can use is enabled when the device has it; the
  // context records what it enabled so delegates can check.
  const GpuFeatures& supported = device.features;
  features_.timeline_semaphore = true;
  features_.shader_int64 = supported.shader_int64;
  features_.shader_int16 = supported.shader_int16;
  features_.shader_int8 = supported.shader_int8;
  features_.shader_float16 = supported.shader_float16;
  features_.storage_buffer_16bit_access = supported.storage_buffer_16bit_access;
  features_.storage_buffer_8bit_access = supported.storage_buffer_8bit_access;
  features_.synchronization2 = supported.synchronization2;
  features_.cooperative_matrix_nv = supported.cooperative_matrix_nv;

  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.features.shaderInt64 = features_.shader_int64;
  features.features.shaderInt16 = features_.shader_int16;
  VkPhysicalDeviceVulkan11Features v11{};
  v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  v11.storageBuffer16BitAccess = features_.storage_buffer_16bit_access;
  VkPhysicalDeviceVulkan12Features v12{};
  v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  v12.timelineSemaphore = VK_TRUE;
  v12.shaderInt8 = features_.shader_int8;
  v12.shaderFloat16 = features_.shader_float16;
  v12.storageBuffer8BitAccess = features_.storage_buffer_8bit_access;
  VkPhysicalDeviceSynchronization2Features sync2{};
  sync2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES;
  sync2.synchronization2 = VK_TRUE;
  features.pNext = &v11;
  v11.pNext = &v12;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{};
  coopmat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
  coopmat.cooperativeMatrix = VK_TRUE;
  if (features_.cooperative_matrix_nv) {
    v12.pNext = &coopmat;
    if (!has_device_extension(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
      enabled_extensions_.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  if (features_.synchronization2) {
    sync2.pNext = v12.pNext;
    v12.pNext = &sync2;
    // Core in 1.3; before that it needs the KHR extension.
    const std::string sync2_name = VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME;
    if (device.api_version < VK_API_VERSION_1_3 && !has_device_extension(sync2_name)) {
      enabled_extensions_.push_back(sync2_name);
    }
  }

  std::vector<const char*> extension_names;
  for (const std::string& name : enabled_extensions_) extension_names.push_back(name.c_str());
  queue_family_index_ = static_cast<uint32_t>(device.compute_queue_family());
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{};
  queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue_info.queueFamilyIndex = queue_family_index_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo create_info{};
  create_info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  create_info.pNext = &features;
  create_info.queueCreateInfoCount = 1;
  create_info.pQueueCreateInfos = &queue_info;
  create_info.enabledExtensionCount = static_cast<uint32_t>(extension_names.size());
  create_info.ppEnabledExtensionNames = extension_names.data();
  HS_RETURN_IF_ERROR(vk_status(vkCreateDevice(physical_device_, &create_info, nullptr, &device_), "vkCreateDevice")
                         .with_context("failed to create Vulkan device on '" + device.name + "': "));
  owns_device_ = true;
  vkGetDeviceQueue(device_, queue_family_index_, 0, &queue_);
  return Status::ok();
}

Result<std::shared_ptr<SharedGpuContext>> SharedGpuContext::borrow(const SharedGpuContextCreateInfo& info) {
  if (info.instance == VK_NULL_HANDLE || info.physical_device == VK_NULL_HANDLE || info.device == VK_NULL_HANDLE ||
      info.queue == VK_NULL_HANDLE) {
    return invalid_argument("failed to borrow GPU context: instance, physical device, device and queue are required");
  }
  HS_RETURN_IF_ERROR(load_vulkan_loader());
  VkPhysicalDeviceProperties properties{};
  vkGetPhysicalDeviceProperties(info.physical_device, &properties);
  if (properties.apiVersion < kMinVulkanVersion) {
    return unsupported("failed to borrow GPU context: device '" + std::string(properties.deviceName) +
                       "' is Vulkan " + format_vk_version(properties.apiVersion) + " < 1.2");
  }
  std::shared_ptr<SharedGpuContext> context(new SharedGpuContext());
  context->instance_ = info.instance;
  context->owns_instance_ = info.owns_instance;
  context->physical_device_ = info.physical_device;
  context->device_ = info.device;
  context->owns_device_ = info.owns_device;
  context->queue_ = info.queue;
  context->queue_family_index_ = info.queue_family_index;
  context->enabled_extensions_ = info.enabled_device_extensions;
  context->features_ = info.enabled_features;
  context->features_.timeline_semaphore = true;
  if (info.timeline_semaphore != VK_NULL_HANDLE) {
    HS_ASSIGN_OR_RETURN(context->timeline_, TimelineSemaphore::wrap(info.device, info.timeline_semaphore,
                                                                    volk_timeline_functions(),
                                                                    info.owns_timeline_semaphore));
  }
  HS_RETURN_IF_ERROR(context->finish_setup());
  spdlog::info("[gpu] borrowed context on device '{}' (queue family {}, owns instance {}, device {})",
               context->device_name(), context->queue_family_index_, context->owns_instance_,
               context->owns_device_);
  return context;
}

Status SharedGpuContext::finish_setup() {
  vkGetPhysicalDeviceProperties(physical_device_, &properties_);
  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  VkPhysicalDeviceProperties2 properties2{};
  properties2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  properties2.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(physical_device_, &properties2);
  subgroup_size_ = subgroup.subgroupSize;
  if (features_.cooperative_matrix_nv) coopmat_shapes_ = query_coopmat_shapes(instance_, physical_device_);
  vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory_properties_);
  if (timeline_ == nullptr) {
    HS_ASSIGN_OR_RETURN(timeline_, TimelineSemaphore::create(device_, volk_timeline_functions()));
  }
  VkPipelineCacheCreateInfo cache_info{};
  cache_info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  VkPipelineCache cache = VK_NULL_HANDLE;
  HS_VK_RETURN_IF_ERROR(vkCreatePipelineCache(device_, &cache_info, nullptr, &cache));
  pipeline_cache_ = VkHandle<VkPipelineCache>(device_, cache);
  return Status::ok();
}

SharedGpuContext::~SharedGpuContext() {
  if (device_ != VK_NULL_HANDLE) {
    if (owns_device_) {
      vkDeviceWaitIdle(device_);
    } else if (timeline_ != nullptr) {
      // Someone else's device may be busy with their own work: wait only for ours.
      const Status waited = timeline_->wait(timeline_->last_value(), kGpuWaitTimeout);
      if (!waited.is_ok()) spdlog::warn("[gpu] failed to drain context before teardown: {}", waited.message());
    }
  }
  pipeline_cache_.reset();
  timeline_.reset();
  if (owns_device_ && device_ != VK_NULL_HANDLE) vkDestroyDevice(device_, nullptr);
  messenger_.reset();
  if (owns_instance_ && instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

bool SharedGpuContext::has_device_extension(std::string_view name) const {
  return std::find(enabled_extensions_.begin(), enabled_extensions_.end(), name) != enabled_extensions_.end();
}

Result<VkCommandPool> SharedGpuContext::create_command_pool() const {
  VkCommandPoolCreateInfo create_info{};
  create_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  create_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  create_info.queueFamilyIndex = queue_family_index_;
  VkCommandPool pool = VK_NULL_HANDLE;
  HS_VK_RETURN_IF_ERROR(vkCreateCommandPool(device_, &create_info, nullptr, &pool));
  return pool;
}

Result<uint64_t> SharedGpuContext::submit(const GpuSubmit& batch) const {
  HS_RETURN_IF_ERROR(timeline_->failure());
  std::lock_guard lock(queue_mutex_);
  const uint64_t signal_value = batch.signal ? timeline_->next_value() : 0;
  const VkSemaphore semaphore = timeline_->handle();
  VkTimelineSemaphoreSubmitInfo timeline_info{};
  timeline_info.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  VkSubmitInfo submit_info{};
  submit_info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit_info.pNext = &timeline_info;
  submit_info.commandBufferCount = static_cast<uint32_t>(batch.command_buffers.size());
  submit_info.pCommandBuffers = batch.command_buffers.data();
  if (batch.wait_value != 0) {
    submit_info.waitSemaphoreCount = 1;
    submit_info.pWaitSemaphores = &semaphore;
    submit_info.pWaitDstStageMask = &batch.wait_stages;
    timeline_info.waitSemaphoreValueCount = 1;
    timeline_info.pWaitSemaphoreValues = &batch.wait_value;
  }
  if (batch.signal) {
    submit_info.signalSemaphoreCount = 1;
    submit_info.pSignalSemaphores = &semaphore;
    timeline_info.signalSemaphoreValueCount = 1;
    timeline_info.pSignalSemaphoreValues = &signal_value;
  }
  VkResult result = injected_fault(FaultPoint::kSubmit);
  // An injected loss leaves nothing running, as a real one does, so error
  // paths may free what earlier submits used.
  if (result == VK_ERROR_DEVICE_LOST) (void)vkQueueWaitIdle(queue_);
  if (result == VK_SUCCESS) result = vkQueueSubmit(queue_, 1, &submit_info, batch.fence);
  if (result != VK_SUCCESS) {
    // Nothing will signal the reserved value: waits for last_value() must not wait for it.
    if (batch.signal) timeline_->release_unsubmitted(signal_value);
    Status status = vk_status(result, "vkQueueSubmit").with_context("failed to submit GPU work: ");
    mark_lost_on(result, status);
    return status;
  }
  return signal_value;
}

Status SharedGpuContext::wait_idle() const {
  std::lock_guard lock(queue_mutex_);
  const VkResult result = vkQueueWaitIdle(queue_);
  Status status = vk_status(result, "vkQueueWaitIdle").with_context("failed to wait for the GPU queue: ");
  mark_lost_on(result, status);
  return status;
}

Status SharedGpuContext::wait(uint64_t value, std::chrono::nanoseconds timeout) const {
  return timeline_->wait(value, timeout);
}

void SharedGpuContext::mark_lost_on(VkResult result, const Status& status) const {
  if (result == VK_ERROR_DEVICE_LOST) timeline_->mark_failed(status);
}

Status SharedGpuContext::wait_spinning_from(uint64_t value, std::chrono::steady_clock::time_point spin_from,
                                            std::chrono::nanoseconds max_spin,
                                            std::chrono::nanoseconds timeout) const {
  return timeline_->wait_spinning_from(value, spin_from, max_spin, timeout);
}

size_t SharedGpuContext::validation_message_count() const {
  return validation_log_ ? validation_log_->message_count() : 0;
}

std::vector<std::string> SharedGpuContext::validation_messages() const {
  return validation_log_ ? validation_log_->messages() : std::vector<std::string>{};
}

}  // namespace hetsched
