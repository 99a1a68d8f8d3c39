#include "shared_gpu/command_pool.h"

#include <spdlog/spdlog.h>

#include "shared_gpu/vk_check.h"

namespace hetsched {

Result<CommandPool> CommandPool::create(SharedGpuContext& context) {
  HS_ASSIGN_OR_RETURN(VkCommandPool pool, context.create_command_pool());
  return CommandPool(context.shared_from_this(), VkHandle<VkCommandPool>(context.device(), pool));
}

CommandPool::~CommandPool() {
  // A lost device runs nothing more: there is nothing to drain.
  if (!pool_ || last_signalled_ == 0 || !context_->lost().is_ok()) return;
  const Status waited = context_->wait(last_signalled_);
  if (!waited.is_ok()) spdlog::warn("[gpu] failed to drain command pool before destroying it: {}", waited.message());
}

Result<VkCommandBuffer> CommandPool::allocate() {
  VkCommandBufferAllocateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  info.commandPool = pool_.get();
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  VkCommandBuffer buffer = VK_NULL_HANDLE;
  HS_VK_RETURN_IF_ERROR(vkAllocateCommandBuffers(context_->device(), &info, &buffer));
  return buffer;
}

void CommandPool::free(VkCommandBuffer buffer) { vkFreeCommandBuffers(context_->device(), pool_.get(), 1, &buffer); }

Result<uint64_t> CommandPool::submit(const GpuSubmit& batch) {
  HS_ASSIGN_OR_RETURN(const uint64_t value, context_->submit(batch));
  if (value != 0) last_signalled_ = value;
  return value;
}

Status CommandPool::run_one_shot(const std::function<void(VkCommandBuffer)>& record, uint64_t wait_value,
                                 std::chrono::nanoseconds timeout) {
  HS_ASSIGN_OR_RETURN(VkCommandBuffer cmd, allocate());
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  Status status = vk_status(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  if (status.is_ok()) {
    record(cmd);
    status = vk_status(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  }
  if (!status.is_ok()) {
    free(cmd);
    return status.with_context("failed to record one-shot commands: ");
  }
  GpuSubmit batch;
  batch.command_buffers = std::span<const VkCommandBuffer>(&cmd, 1);
  batch.wait_value = wait_value;
  Result<uint64_t> signalled = submit(batch);
  if (!signalled.is_ok()) {
    free(cmd);
    return signalled.status();
  }
  HS_RETURN_IF_ERROR(context_->wait(*signalled, timeout));
  free(cmd);
  return Status::ok();
}

void record_memory_barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stages, VkAccessFlags src_access,
                           VkPipelineStageFlags dst_stages, VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cmd, src_stages, dst_stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

}  // namespace hetsched
