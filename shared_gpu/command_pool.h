// CommandPool: one delegate instance's own command pool (pools are never
// shared between delegates), with the record → submit → wait helper that
// transfers and small jobs use.
//
// Ownership: holds a shared_ptr to its SharedGpuContext, so the device
// outlives the pool whatever order the two are dropped in. The destructor
// waits for the work submitted through this pool before destroying it.
//
// Thread-safety: none, like VkCommandPool — one pool belongs to one thread at
// a time (a delegate instance). The context's queue is locked for each
// submit, so pools of different delegates may submit concurrently.
#pragma once

#include <volk.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "hetsched/status.h"
#include "shared_gpu/shared_gpu_context.h"
#include "shared_gpu/vk_handle.h"

namespace hetsched {

class CommandPool {
 public:
  // A new pool on `context`'s queue family. `context` must be owned by a
  // shared_ptr (it always is: create() and borrow() return one).
  static Result<CommandPool> create(SharedGpuContext& context);

  CommandPool() = default;
  CommandPool(CommandPool&&) noexcept = default;
  // Swaps, so the previous pool is destroyed (and drained) before the
  // context it held is released.
  CommandPool& operator=(CommandPool&& other) noexcept {
    CommandPool incoming(std::move(other));
    std::swap(context_, incoming.context_);
    std::swap(pool_, incoming.pool_);
    std::swap(last_signalled_, incoming.last_signalled_);
    return *this;
  }
  ~CommandPool();

  SharedGpuContext& context() const { return *context_; }
  VkCommandPool handle() const { return pool_.get(); }

  // A primary command buffer from this pool; free it with free() or let the
  // pool's destruction free it.
  Result<VkCommandBuffer> allocate();
  void free(VkCommandBuffer buffer);

  // SharedGpuContext::submit, remembering the signalled value so the
  // destructor can wait for it.
  Result<uint64_t> submit(const GpuSubmit& batch);

  // Records a primary command buffer with `record`, submits it (signalling
  // the timeline, after `wait_value` when nonzero) and waits on the host
  // until it completes. The command buffer is freed afterwards, unless the
  // wait failed (it may still be pending; the pool's destruction frees it).
  Status run_one_shot(const std::function<void(VkCommandBuffer)>& record, uint64_t wait_value = 0,
                      std::chrono::nanoseconds timeout = kGpuWaitTimeout);

 private:
  CommandPool(std::shared_ptr<SharedGpuContext> context, VkHandle<VkCommandPool> pool)
      : context_(std::move(context)), pool_(std::move(pool)) {}

  // Declared first: destroyed after the pool.
  std::shared_ptr<SharedGpuContext> context_;
  VkHandle<VkCommandPool> pool_;
  uint64_t last_signalled_ = 0;
};

// A global memory barrier: everything `src_access` by `src_stages` before it
// is made available and visible to `dst_access` by `dst_stages` after it, for
// this and every later submission to the same queue.
void record_memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stages, VkAccessFlags src_access,
                           VkPipelineStageFlags dst_stages, VkAccessFlags dst_access);

}  // namespace hetsched
