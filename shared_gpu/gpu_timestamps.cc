#include "shared_gpu/gpu_timestamps.h"

#include <chrono>
#include <cmath>

#include "shared_gpu/vk_check.h"

namespace hetsched {

namespace {
uint32_t timestamp_valid_bits(const SharedGpuContext& context) {
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(context.physical_device(), &families, nullptr);
  std::vector<VkQueueFamilyProperties> properties(families);
  vkGetPhysicalDeviceQueueFamilyProperties(context.physical_device(), &families, properties.data());
  return context.queue_family_index() < families ? properties[context.queue_family_index()].timestampValidBits : 0;
}

double steady_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}
}  // namespace

bool queue_has_timestamps(const SharedGpuContext& context) { return timestamp_valid_bits(context) > 0; }

Result<VkHandle<VkQueryPool>> create_timestamp_query_pool(const SharedGpuContext& context, uint32_t queries) {
  if (!queue_has_timestamps(context))
    return unsupported("failed to create a timestamp query pool: the queue family has no timestamps");
  VkQueryPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = queries;
  VkQueryPool pool = VK_NULL_HANDLE;
  HS_VK_RETURN_IF_ERROR(vkCreateQueryPool(context.device(), &info, nullptr, &pool));
  return VkHandle<VkQueryPool>(context.device(), pool);
}

Result<GpuClock> calibrate_gpu_clock(CommandPool& pool) {
  SharedGpuContext& context = pool.context();
  const uint32_t bits = timestamp_valid_bits(context);
  if (bits == 0) return unsupported("failed to calibrate the GPU clock: the queue family has no timestamps");
  GpuClock clock;
  clock.ns_per_tick = context.limits().timestampPeriod;
  clock.valid_mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  HS_ASSIGN_OR_RETURN(VkHandle<VkQueryPool> queries, create_timestamp_query_pool(context, 1));
  // Five tries; the shortest round trip bounds the error best. The first
  // also warms the queue up.
  double best_round_trip = INFINITY;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const double before = steady_ns();
    HS_RETURN_IF_ERROR(pool.run_one_shot([&](VkCommandBuffer cmd) {
      vkCmdResetQueryPool(cmd, queries.get(), 0, 1);
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries.get(), 0);
    }));
    const double after = steady_ns();
    uint64_t ticks = 0;
    HS_VK_RETURN_IF_ERROR(vkGetQueryPoolResults(context.device(), queries.get(), 0, 1, sizeof(ticks), &ticks,
                                                sizeof(ticks), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    if (after - before < best_round_trip) {
      best_round_trip = after - before;
      clock.offset_ns = (before + after) / 2 - static_cast<double>(ticks & clock.valid_mask) * clock.ns_per_tick;
    }
  }
  return clock;
}

Result<GpuTimestamps> GpuTimestamps::create(CommandPool& pool, uint32_t pairs) {
  GpuTimestamps t;
  if (pairs == 0) return t;
  SharedGpuContext& context = pool.context();
  t.device_ = context.device();
  HS_ASSIGN_OR_RETURN(t.pool_, create_timestamp_query_pool(context, 2 * pairs));
  for (uint32_t i = 0; i < 2 * pairs; ++i) {
    HS_ASSIGN_OR_RETURN(VkCommandBuffer cmd, pool.allocate());
    t.commands_.push_back(cmd);
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    HS_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(cmd, &begin));
    if (i % 2 == 0) vkCmdResetQueryPool(cmd, t.pool_.get(), i, 2);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, t.pool_.get(), i);
    HS_VK_RETURN_IF_ERROR(vkEndCommandBuffer(cmd));
  }
  return t;
}

Result<std::pair<uint64_t, uint64_t>> GpuTimestamps::read(uint32_t pair) const {
  uint64_t ticks[2] = {};
  HS_VK_RETURN_IF_ERROR(vkGetQueryPoolResults(device_, pool_.get(), 2 * pair, 2, sizeof(ticks), ticks,
                                              sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  return std::pair{ticks[0], ticks[1]};
}

}  // namespace hetsched
