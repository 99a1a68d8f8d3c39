// VulkanIsland: one island initialised by the Vulkan delegate — its memory
// (weights uploaded once into buffers of its own; inputs, outputs and the
// scratch block of intermediates at the offsets of a device arena, the
// session's or its own), one descriptor set per dispatch, and ONE command
// buffer recorded at init and replayed by every execute().
//
// Ownership: holds the SharedGpuContext, the delegate's command pool (its
// command buffer comes from it) and the delegate's kernel library, all by
// shared_ptr, so it may outlive the delegate that made it. The destructor
// waits for its last submission before freeing anything.
//
// Thread-safety: execute() calls must not overlap for one island (the
// executor runs a step once at a time); different islands may execute
// concurrently (the context locks its queue).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "delegates/vulkan/kernel_library.h"
#include "delegates/vulkan/lowering.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/compute_pipeline.h"
#include "shared_gpu/shared_gpu_context.h"

namespace hetsched::vulkan {

// A delegate instance's command pool with the lock that serialises its use
// (recording, freeing) across the islands sharing it.
struct DelegatePool {
  std::mutex mutex;
  CommandPool pool;
};

struct VulkanIslandOptions {
  int island_id = 0;
  std::string context_key;  // "token:group", for MemoryDomain
  // Writes GPU timestamps at the start and end of the command buffer, for
  // last_gpu_seconds(). Needs timestamp support on the queue family.
  bool gpu_timestamps = false;
  // Writes a timestamp after every step too, for op_timings() (profile_ops).
  // Ignored where the queue family has no timestamps.
  bool profile_ops = false;
};

class VulkanIsland final : public IslandHandle {
 public:
  // Allocates and fills the buffers of `lowered`, creates the pipelines and
  // descriptor sets, and records the command buffer. Waits on the host for
  // the weight uploads; nothing else runs yet.
  // With `placement` (not retained), inputs, outputs and scratch live in
  // its arena; without, the island allocates an arena of its own.
  static Result<std::unique_ptr<VulkanIsland>> create(std::shared_ptr<SharedGpuContext> context,
                                                      std::shared_ptr<DelegatePool> pool,
                                                      std::shared_ptr<KernelLibrary> library, LoweredIsland lowered,
                                                      const VulkanIslandOptions& options,
                                                      const DevicePlacement* placement = nullptr);
  ~VulkanIsland() override;
  VulkanIsland(const VulkanIsland&) = delete;
  VulkanIsland& operator=(const VulkanIsland&) = delete;

  MemoryDomain input_domain(size_t i) const override;
  MemoryDomain output_domain(size_t i) const override;
  const DeviceTensor* device_input(size_t i) const override;
  const DeviceTensor* device_output(size_t i) const override;
  std::shared_ptr<SharedGpuContext> gpu_context() const override { return context_; }

  // Submits the recorded command buffer: waits on ctx.gpu.wait_value on the
  // device, signals when ctx.gpu.signal (the value goes to
  // ctx.signalled_value), idles the queue when ctx.gpu.queue_wait_idle_after.
  // Never waits on the host otherwise. `inputs` and `outputs` are ignored.
  Status execute(ExecContext& ctx, std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) override;

  // --- introspection for tests and benchmarks ---
  size_t node_count() const { return node_count_; }
  size_t dispatch_count() const { return dispatch_count_; }
  // Barriers recorded between its steps (its leading and trailing ones left out).
  size_t barrier_count() const { return barrier_count_; }
  // The pool its command buffer came from: the delegate instance's own.
  VkCommandPool command_pool() const { return pool_->pool.handle(); }
  // GPU time between the timestamps of the last execute(), in seconds.
  // Call after that execution completed (wait on its signalled value).
  // kFailedPrecondition without gpu_timestamps or before any execute().
  Result<double> last_gpu_seconds() const;
  // profile_ops: each step's GPU time in the last execute() (the time from
  // the previous step's end to its own), once that run completed.
  Result<std::vector<OpTiming>> op_timings() const override;
  std::optional<CommandStreamCounts> command_stream() const override {
    return CommandStreamCounts{dispatch_count_, copy_count_, barrier_count_};
  }

 private:
  VulkanIsland() = default;
  // A lowered buffer as the island binds it: a range of a Buffer.
  struct View {
    Buffer* buffer = nullptr;
    uint64_t offset = 0;
    uint64_t size = 0;
    VkDescriptorBufferInfo descriptor() const { return buffer->descriptor(offset, size); }
  };
  Status allocate_buffers(const LoweredIsland& lowered, const DevicePlacement* placement);
  Status upload_constants(const LoweredIsland& lowered);
  Status record(const LoweredIsland& lowered);

  // Declared first, destroyed last: everything below belongs to its device.
  std::shared_ptr<SharedGpuContext> context_;
  std::shared_ptr<DelegatePool> pool_;
  std::shared_ptr<KernelLibrary> library_;
  std::vector<Buffer> owned_;  // constants, and the arena when none was given
  std::vector<View> views_;    // indexed like LoweredIsland::buffers
  DescriptorPool descriptors_;
  VkHandle<VkQueryPool> timestamps_;
  VkHandle<VkQueryPool> step_stamps_;  // profile_ops: one before the steps, one after each
  std::vector<OpTiming> step_pieces_;  // profile_ops: each step's nodes and kind, times filled on read
  VkCommandBuffer command_buffer_ = VK_NULL_HANDLE;  // freed by the destructor
  std::vector<DeviceTensor> inputs_;
  std::vector<DeviceTensor> outputs_;
  VulkanIslandOptions options_;
  size_t node_count_ = 0;
  size_t dispatch_count_ = 0;
  size_t copy_count_ = 0;
  size_t barrier_count_ = 0;
  // What the destructor waits for: the last signalled timeline value, or
  // queue idleness when the last submission signalled nothing.
  std::atomic<uint64_t> last_signalled_{0};
  std::atomic<bool> unsignalled_pending_{false};
  std::atomic<bool> executed_{false};
};

}  // namespace hetsched::vulkan
