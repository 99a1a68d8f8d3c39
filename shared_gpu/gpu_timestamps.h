// GPU timestamps on the host clock: a query pool of timestamp pairs, the
// small command buffers that write them around a GPU step's own commands,
// and the offset that maps device ticks to std::chrono::steady_clock.
//
// A begin stamp is written with BOTTOM_OF_PIPE, i.e. once every command
// submitted before it has finished: on an in-order queue that is when the
// step's own work can start (its commands begin with a full barrier), so a
// step waiting behind another request's work is not charged for it.
//
// Clock mapping: without VK_EXT_calibrated_timestamps (the context does not
// enable it) the offset comes from submitting a lone timestamp write and
// reading the host clock before the submit and after the wait, best of a few
// tries; its error is half the shortest round trip (tens of µs on a discrete
// GPU, less on lavapipe).
//
// Ownership: holds the context by shared_ptr. Thread-safety: none; one
// per executor lane.
#pragma once

#include <volk.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "hetsched/status.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/shared_gpu_context.h"
#include "shared_gpu/vk_handle.h"

namespace hetsched {

// Maps device timestamp ticks to steady_clock nanoseconds.
struct GpuClock {
  double ns_per_tick = 1.0;
  double offset_ns = 0;  // host_ns = ticks * ns_per_tick + offset_ns
  uint64_t valid_mask = ~0ull;
  double host_ns(uint64_t ticks) const { return static_cast<double>(ticks & valid_mask) * ns_per_tick + offset_ns; }
};

// True when the context's queue family writes timestamps.
bool queue_has_timestamps(const SharedGpuContext& context);
// A query pool of `queries` timestamps on the context's device. kUnsupported
// when its queue family has no timestamps.
Result<VkHandle<VkQueryPool>> create_timestamp_query_pool(const SharedGpuContext& context, uint32_t queries);

// Calibrates `context`'s clock against steady_clock (see above). kUnsupported
// when its queue has no timestamps.
Result<GpuClock> calibrate_gpu_clock(CommandPool& pool);

class GpuTimestamps {
 public:
  // `pairs` begin/end pairs, each with its two recorded command buffers
  // from `pool` (which must outlive this object's use of them).
  static Result<GpuTimestamps> create(CommandPool& pool, uint32_t pairs);
  GpuTimestamps() = default;

  // Put begin(i) before and end(i) after a step's command buffers, in one submit.
  VkCommandBuffer begin(uint32_t pair) const { return commands_[2 * pair]; }
  VkCommandBuffer end(uint32_t pair) const { return commands_[2 * pair + 1]; }
  // The ticks of pair `pair`, once the submit that carried it has completed.
  Result<std::pair<uint64_t, uint64_t>> read(uint32_t pair) const;
  explicit operator bool() const { return static_cast<bool>(pool_); }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkHandle<VkQueryPool> pool_;
  std::vector<VkCommandBuffer> commands_;  // freed with the command pool
};

}  // namespace hetsched
