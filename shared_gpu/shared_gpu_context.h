// SharedGpuContext: the Vulkan objects that several GPU delegates share — one
// instance, physical device, device, compute queue (with its family index and
// a lock), the enabled extensions and features, a timeline semaphore and a
// pipeline cache.
//
// Lifecycle: create() makes everything itself; borrow() wraps handles that a
// host application made. Either returns a shared_ptr: every delegate handle,
// CommandPool, Buffer and ComputePipeline made from the context holds one, so
// the device lives until its last user is gone, whatever order they are torn
// down in. Contexts are shared between delegates through the
// SharedGpuContextRegistry.
//
// Ownership: for each of instance, device and timeline semaphore the context
// records whether it owns it (owns_instance() ...). Owned handles are
// destroyed by the destructor; borrowed ones never are, and must outlive the
// context. The pipeline cache is always owned.
//
// Thread-safety: every method is thread-safe. The handles never change after
// creation. The queue is externally synchronised in Vulkan, so all queue
// access goes through submit()/wait_idle() or lock_queue(). Command pools are
// not shared: each delegate instance makes its own (create_command_pool(), or
// the CommandPool RAII owner in command_pool.h).
#pragma once

#include <volk.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetsched/status.h"
#include "shared_gpu/device_info.h"
#include "shared_gpu/validation.h"
#include "shared_gpu/vk_handle.h"
#include "sync/timeline_semaphore.h"

namespace hetsched {

// How long host waits on GPU work may take before they count as a hang, where
// no profile says (scheduler.gpu_wait_timeout_ms sets a session's, with this
// default). lavapipe runs shaders on the CPU, and a dispatch over a million
// elements on a loaded two-core CI machine takes seconds; a minute separates
// slow from stuck.
inline constexpr std::chrono::nanoseconds kGpuWaitTimeout = std::chrono::seconds(60);

// Options for SharedGpuContext::create.
struct GpuContextOptions {
  // "auto", a device index, or a substring of the device name (select_device).
  std::string device = "auto";
  // Enables VK_LAYER_KHRONOS_validation with a messenger that counts
  // warnings and errors (validation_message_count()). The environment
  // variable HETSCHED_VK_VALIDATION=1 turns it on too.
  bool enable_validation = false;
  std::string app_name = "hetsched";
  // Device extensions the caller needs (kUnsupported when missing) or can use.
  std::vector<std::string> required_device_extensions;
  std::vector<std::string> optional_device_extensions;
};

// Handles a host application made, for SharedGpuContext::borrow (the RFC's
// SharedGpuContextCreateInfo). The device must be Vulkan 1.2+ with the
// timelineSemaphore feature enabled, and `queue` a queue of
// `queue_family_index` with compute support.
struct SharedGpuContextCreateInfo {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;
  // A timeline semaphore of `device`, or VK_NULL_HANDLE for the context to
  // make (and own) one.
  VkSemaphore timeline_semaphore = VK_NULL_HANDLE;
  // Hand ownership over: the context destroys what it owns, in the right
  // order. All false by default: borrowed handles are never destroyed.
  bool owns_instance = false;
  bool owns_device = false;
  bool owns_timeline_semaphore = false;
  // What the host enabled on the device, for delegates that check.
  std::vector<std::string> enabled_device_extensions;
  GpuFeatures enabled_features{.timeline_semaphore = true};
};

// One batch for SharedGpuContext::submit.
struct GpuSubmit {
  std::span<const VkCommandBuffer> command_buffers;
  // Device-side wait on the context timeline before the commands run; 0: none.
  uint64_t wait_value = 0;
  VkPipelineStageFlags wait_stages = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  // Signal a freshly reserved timeline value when the commands finish.
  bool signal = true;
  // Optional fence, signalled when the batch completes.
  VkFence fence = VK_NULL_HANDLE;
};

// The command buffers of one submit: an optional `before`, the caller's own,
// an optional `after` (the executor's timestamp writes), then up to
// kMaxThen more that follow in the same submit (the executor's copies of the
// outputs, StepCall::then); nulls left out.
struct CommandBufferList {
  static constexpr size_t kMaxThen = 8;
  CommandBufferList(VkCommandBuffer before, VkCommandBuffer own, VkCommandBuffer after,
                    std::span<const VkCommandBuffer> then = {}) {
    for (VkCommandBuffer cmd : {before, own, after})
      if (cmd) cmds[count++] = cmd;
    for (size_t i = 0; i < then.size() && i < kMaxThen; ++i)
      if (then[i]) cmds[count++] = then[i];
  }
  std::span<const VkCommandBuffer> span() const { return {cmds, count}; }
  VkCommandBuffer cmds[3 + kMaxThen] = {};
  uint32_t count = 0;
};

class SharedGpuContext : public std::enable_shared_from_this<SharedGpuContext> {
 public:
  // Creates instance, device, queue, timeline semaphore and pipeline cache on
  // the device chosen by options.device. Errors: see create_vulkan_instance
  // and select_device; kUnsupported when a required extension is missing.
  static Result<std::shared_ptr<SharedGpuContext>> create(const GpuContextOptions& options);
  // Wraps host-made handles (see SharedGpuContextCreateInfo for what is
  // owned). Makes a timeline semaphore when none is given. No validation
  // messenger: the host owns the instance and its messengers.
  static Result<std::shared_ptr<SharedGpuContext>> borrow(const SharedGpuContextCreateInfo& info);

  // Waits for the work submitted through this context (for owned devices:
  // the whole device), then destroys what it owns.
  ~SharedGpuContext();
  SharedGpuContext(const SharedGpuContext&) = delete;
  SharedGpuContext& operator=(const SharedGpuContext&) = delete;

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_device_; }
  VkDevice device() const { return device_; }
  // Use only under lock_queue(), or through submit()/wait_idle().
  VkQueue queue() const { return queue_; }
  uint32_t queue_family_index() const { return queue_family_index_; }
  const std::vector<std::string>& enabled_device_extensions() const { return enabled_extensions_; }
  bool has_device_extension(std::string_view name) const;
  const GpuFeatures& features() const { return features_; }
  const VkPhysicalDeviceProperties& properties() const { return properties_; }
  const VkPhysicalDeviceLimits& limits() const { return properties_.limits; }
  const VkPhysicalDeviceMemoryProperties& memory_properties() const { return memory_properties_; }
  std::string_view device_name() const { return properties_.deviceName; }
  // Invocations per subgroup (VkPhysicalDeviceSubgroupProperties).
  uint32_t subgroup_size() const { return subgroup_size_; }
  // The subgroup shapes of VK_NV_cooperative_matrix when the context
  // enabled it (features().cooperative_matrix_nv), else empty.
  const std::vector<CoopMatShape>& cooperative_matrix_shapes() const { return coopmat_shapes_; }

  bool owns_instance() const { return owns_instance_; }
  bool owns_device() const { return owns_device_; }
  bool owns_timeline_semaphore() const { return timeline_->owns_handle(); }

  // The shared timeline: signalled by submit(), waited on by the host and by
  // later submits. Lives as long as the context.
  TimelineSemaphore& timeline() const { return *timeline_; }
  // Shared by every pipeline made on this context (Vulkan synchronises
  // pipeline caches internally during pipeline creation).
  VkPipelineCache pipeline_cache() const { return pipeline_cache_.get(); }

  // A new command pool of the queue's family (resettable command buffers),
  // owned by the caller, who destroys it before the context goes away. Each
  // delegate instance makes its own: pools are never shared.
  Result<VkCommandPool> create_command_pool() const;

  // Submits one batch to the queue under the queue lock: waits on
  // `wait_value`, and when `signal` reserves the next timeline value and
  // signals it. Returns that value (0 without signal). Device loss marks the
  // timeline failed, so later waits report it.
  Result<uint64_t> submit(const GpuSubmit& batch) const;
  // vkQueueWaitIdle under the queue lock (the queue_wait_idle sync mode).
  Status wait_idle() const;
  // Waits on the host until the timeline reaches `value`.
  Status wait(uint64_t value, std::chrono::nanoseconds timeout = kGpuWaitTimeout) const;
  // wait(), polling from `spin_from` on (TimelineSemaphore::wait_spinning_from).
  Status wait_spinning_from(uint64_t value, std::chrono::steady_clock::time_point spin_from,
                            std::chrono::nanoseconds max_spin,
                            std::chrono::nanoseconds timeout = kGpuWaitTimeout) const;
  // The device is lost for good once any call returned VK_ERROR_DEVICE_LOST:
  // callers outside submit/wait (allocation, pipeline creation) record it
  // here, so every later submit and wait on the context reports it at once.
  void mark_lost_on(VkResult result, const Status& status) const;
  // The first device loss recorded on this context, or ok.
  Status lost() const { return timeline_->failure(); }
  // The queue lock, for callers that must call vkQueueSubmit (or
  // vkQueueBindSparse, ...) themselves. Signal the timeline only with values
  // reserved by timeline().next_value() while holding this lock.
  std::unique_lock<std::mutex> lock_queue() const { return std::unique_lock(queue_mutex_); }

  // Validation messages (warnings + errors) reported so far; 0 without
  // validation. validation_log() outlives the context for checks at teardown
  // (null without validation).
  size_t validation_message_count() const;
  std::vector<std::string> validation_messages() const;
  std::shared_ptr<const ValidationLog> validation_log() const { return validation_log_; }

 private:
  SharedGpuContext() = default;
  Status create_device(const DeviceInfo& device, const GpuContextOptions& options);
  Status finish_setup();

  // Declared in destruction order's reverse; the destructor tears the Vulkan
  // objects down explicitly (pipeline cache, timeline, device, messenger,
  // instance), and the log goes last so teardown messages still land in it.
  std::shared_ptr<ValidationLog> validation_log_;
  VkInstance instance_ = VK_NULL_HANDLE;
  bool owns_instance_ = false;
  DebugMessenger messenger_;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  bool owns_device_ = false;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_index_ = 0;
  std::vector<std::string> enabled_extensions_;
  GpuFeatures features_;
  uint32_t subgroup_size_ = 0;
  std::vector<CoopMatShape> coopmat_shapes_;
  VkPhysicalDeviceProperties properties_{};
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  std::unique_ptr<TimelineSemaphore> timeline_;
  VkHandle<VkPipelineCache> pipeline_cache_;
  mutable std::mutex queue_mutex_;
};

}  // namespace hetsched
