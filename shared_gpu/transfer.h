// GpuTransfers: the copies the scheduler's handoffs need on one context —
// buffer to buffer, with or without an NCHW↔NHWC permute of 32- or 16-bit elements,
// and to or from host-visible staging — recorded once into command buffers
// of its own pool and replayed on every run. The scheduler asks for copies
// by buffer range and shape; it records no Vulkan commands itself.
//
// Ownership: holds the context by shared_ptr; the command buffers it records
// are freed with it. Thread-safety: none; one per executor lane and context.
#pragma once

#include <volk.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "hetsched/status.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/compute_pipeline.h"
#include "sync/step_sync.h"

namespace hetsched {

// `size` bytes of `buffer` from `offset`. Not owned. `foreign` names a
// buffer that is not a Buffer of ours (a host application's VkBuffer on the
// context's device), used when `buffer` is null; its bounds are the caller's
// to keep.
struct BufferRange {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = 0;
  VkBuffer foreign = VK_NULL_HANDLE;
};

// A host application's timeline semaphore on the context's device and a
// value on it (null semaphore: none).
struct ForeignTimelinePoint {
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;
};

// A rank-4 tensor with logical dims [n, c, h, w] of 4-byte elements, or of
// 2-byte ones (an even count: the shader writes whole words), moved from
// NCHW to NHWC (to_nhwc) or back.
struct Permute4d {
  uint32_t n = 0, c = 0, h = 0, w = 0;
  bool to_nhwc = true;
  uint32_t element_bytes = 4;  // 4 or 2
};

class GpuTransfers {
 public:
  static Result<std::unique_ptr<GpuTransfers>> create(std::shared_ptr<SharedGpuContext> context);

  SharedGpuContext& context() const { return *context_; }
  CommandPool& pool() { return pool_; }

  // Records commands that copy `src` into `dst` (equal sizes), or permute it
  // when `permute` is given, after whatever earlier submissions wrote to
  // `src` (shaders, transfers, the host) and before anything later reads
  // `dst` (shaders, transfers, the host after a wait).
  Result<VkCommandBuffer> record_copy(BufferRange src, BufferRange dst, const Permute4d* permute = nullptr);
  // record_copy into `cmd`, a command buffer this object recorded before
  // and that is not pending, instead of a new one: copies to or from a
  // caller's buffer, which may be another buffer on every run, are recorded
  // per run without allocating. A permute needs `cmd` to have been recorded
  // with one (its descriptor set is rewritten).
  Status rerecord_copy(VkCommandBuffer cmd, BufferRange src, BufferRange dst, const Permute4d* permute = nullptr);

  // One empty batch that joins a host application's semaphore to the
  // context's timeline: it waits for `wait` (if any) and for `timeline_wait`
  // on the context timeline (0: none), then signals a fresh timeline value,
  // which it returns, and `signal` (if any). Under the queue lock, as every
  // submit to the context.
  Result<uint64_t> submit_join(ForeignTimelinePoint wait, uint64_t timeline_wait, ForeignTimelinePoint signal);

  // Submits `cmd` between `before` and `after` (either may be null: the
  // executor's timestamp writes) as `sync` says. Returns the signalled
  // timeline value (0: none). Idles the queue after when sync says so.
  Result<uint64_t> submit(VkCommandBuffer cmd, const GpuStepSync& sync, VkCommandBuffer before = VK_NULL_HANDLE,
                          VkCommandBuffer after = VK_NULL_HANDLE);

 private:
  std::shared_ptr<SharedGpuContext> context_;
  CommandPool pool_;
  ComputePipeline permute_;
  std::vector<DescriptorPool> descriptors_;  // another pool when the last is full
  std::vector<VkCommandBuffer> recorded_;    // freed with pool_
  std::map<VkCommandBuffer, VkDescriptorSet> permute_sets_;  // the set each permute binds
};

}  // namespace hetsched
