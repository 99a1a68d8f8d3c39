#include "shared_gpu/transfer.h"

#include <algorithm>

#include "shared_gpu/shaders/layout_permute_spv.h"
#include "shared_gpu/vk_check.h"

namespace hetsched {

namespace {
// Sets per descriptor pool; a model rarely has more layout-changing handoffs.
constexpr uint32_t kSetsPerPool = 64;
// Everything that may have written a handoff's source: shaders, transfers
// (copies, and host writes made visible by the submit itself).
constexpr VkPipelineStageFlags kProducerStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kProducerWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

// The reader comes next: a shader or a transfer of a later submit, or the
// host once it has waited for this one.
void record_reader_barrier(VkCommandBuffer cmd) {
  record_memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                        VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT);
}
}  // namespace

Result<std::unique_ptr<GpuTransfers>> GpuTransfers::create(std::shared_ptr<SharedGpuContext> context) {
  auto t = std::unique_ptr<GpuTransfers>(new GpuTransfers());
  t->context_ = std::move(context);
  HS_ASSIGN_OR_RETURN(t->pool_, CommandPool::create(*t->context_));
  ComputePipelineDesc desc;
  desc.name = "layout_permute";
  desc.spirv = kLayoutPermuteSpv;
  desc.storage_buffer_count = 2;
  desc.push_constant_size = 6 * sizeof(uint32_t);
  HS_ASSIGN_OR_RETURN(t->permute_, ComputePipeline::create(*t->context_, desc));
  return t;
}

namespace {

VkBuffer handle_of(const BufferRange& r) { return r.buffer ? r.buffer->handle() : r.foreign; }

// Own buffers are checked against their size; a foreign one only for being there.
bool fits(const BufferRange& r) {
  return r.buffer ? r.offset + r.size <= r.buffer->size() : r.foreign != VK_NULL_HANDLE;
}

// The copy itself, between the barriers every handoff copy needs.
void record_plain_copy(VkCommandBuffer cmd, const BufferRange& src, const BufferRange& dst) {
  const VkBufferCopy region{src.offset, dst.offset, src.size};
  vkCmdCopyBuffer(cmd, handle_of(src), handle_of(dst), 1, &region);
}

VkDescriptorBufferInfo descriptor_of(const BufferRange& r) {
  return r.buffer ? r.buffer->descriptor(r.offset, r.size) : VkDescriptorBufferInfo{r.foreign, r.offset, r.size};
}

Status check_ranges(const BufferRange& src, const BufferRange& dst) {
  if (fits(src) && fits(dst) && src.size == dst.size) return Status::ok();
  return invalid_argument("failed to record GPU copy: source and destination ranges must fit their buffers and "
                          "be equally long (" + std::to_string(src.size) + " vs " + std::to_string(dst.size) + " bytes)");
}

}  // namespace

Result<VkCommandBuffer> GpuTransfers::record_copy(BufferRange src, BufferRange dst, const Permute4d* permute) {
  HS_RETURN_IF_ERROR(check_ranges(src, dst));
  HS_ASSIGN_OR_RETURN(VkCommandBuffer cmd, pool_.allocate());
  recorded_.push_back(cmd);
  if (permute) {
    const VkDescriptorBufferInfo buffers[2] = {descriptor_of(src), descriptor_of(dst)};
    Result<VkDescriptorSet> allocated = descriptors_.empty() ? Result<VkDescriptorSet>(unavailable("no pool"))
                                                             : descriptors_.back().allocate(permute_, buffers);
    if (!allocated.is_ok()) {
      HS_ASSIGN_OR_RETURN(DescriptorPool pool, DescriptorPool::create(*context_, kSetsPerPool, 2));
      descriptors_.push_back(std::move(pool));
      allocated = descriptors_.back().allocate(permute_, buffers);
    }
    HS_ASSIGN_OR_RETURN(permute_sets_[cmd], std::move(allocated));
  }
  HS_RETURN_IF_ERROR(rerecord_copy(cmd, src, dst, permute));
  return cmd;
}

Status GpuTransfers::rerecord_copy(VkCommandBuffer cmd, BufferRange src, BufferRange dst, const Permute4d* permute) {
  HS_RETURN_IF_ERROR(check_ranges(src, dst));
  if (permute) {
    const uint64_t elements = uint64_t{permute->n} * permute->c * permute->h * permute->w;
    if ((permute->element_bytes != 4 && permute->element_bytes != 2) || elements * permute->element_bytes != src.size ||
        (permute->element_bytes == 2 && elements % 2 != 0))
      return invalid_argument("failed to record GPU layout conversion: " + std::to_string(src.size) +
                              " bytes are not a rank-4 tensor of the given dims of 32-bit elements or an even count "
                              "of 16-bit ones (element bytes " + std::to_string(permute->element_bytes) + ")");
  }
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  if (!permute) {
    HS_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(cmd, &begin));  // resets it (the pool's buffers are resettable)
    record_memory_barrier(cmd, kProducerStages, kProducerWrites, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_TRANSFER_READ_BIT);
    record_plain_copy(cmd, src, dst);
    record_reader_barrier(cmd);
    HS_VK_RETURN_IF_ERROR(vkEndCommandBuffer(cmd));
    return Status::ok();
  }
  auto set = permute_sets_.find(cmd);
  if (set == permute_sets_.end())
    return internal_error("failed to record GPU layout conversion: the command buffer was recorded without one");
  // The set is not in use: `cmd`, its only user, is not pending.
  const VkDescriptorBufferInfo buffers[2] = {descriptor_of(src), descriptor_of(dst)};
  VkWriteDescriptorSet writes[2]{};
  for (uint32_t i = 0; i < 2; ++i) {
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set->second;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &buffers[i];
  }
  vkUpdateDescriptorSets(context_->device(), 2, writes, 0, nullptr);
  HS_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(cmd, &begin));
  record_memory_barrier(cmd, kProducerStages, kProducerWrites, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_SHADER_READ_BIT);
  const uint32_t params[6] = {permute->n, permute->c, permute->h, permute->w, permute->to_nhwc ? 1u : 0u,
                              permute->element_bytes == 2 ? 1u : 0u};
  const uint64_t groups = group_count(src.size / 4, 256);
  const uint32_t gx = static_cast<uint32_t>(std::min<uint64_t>(groups, 65535));
  const uint32_t gy = static_cast<uint32_t>((groups + gx - 1) / gx);
  record_dispatch(cmd, permute_, set->second, std::as_bytes(std::span(params)), gx, gy);
  record_reader_barrier(cmd);
  HS_VK_RETURN_IF_ERROR(vkEndCommandBuffer(cmd));
  return Status::ok();
}

Result<uint64_t> GpuTransfers::submit_join(ForeignTimelinePoint wait, uint64_t timeline_wait,
                                           ForeignTimelinePoint signal) {
  SharedGpuContext& context = *context_;
  HS_RETURN_IF_ERROR(context.timeline().failure());
  const std::unique_lock lock = context.lock_queue();
  const uint64_t value = context.timeline().next_value();
  VkSemaphore waits[2];
  uint64_t wait_values[2];
  VkPipelineStageFlags stages[2] = {VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT};
  uint32_t wait_count = 0;
  if (wait.semaphore) waits[wait_count] = wait.semaphore, wait_values[wait_count++] = wait.value;
  if (timeline_wait) waits[wait_count] = context.timeline().handle(), wait_values[wait_count++] = timeline_wait;
  VkSemaphore signals[2] = {context.timeline().handle(), signal.semaphore};
  const uint64_t signal_values[2] = {value, signal.value};
  const uint32_t signal_count = signal.semaphore ? 2 : 1;
  VkTimelineSemaphoreSubmitInfo timeline_info{};
  timeline_info.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline_info.waitSemaphoreValueCount = wait_count;
  timeline_info.pWaitSemaphoreValues = wait_values;
  timeline_info.signalSemaphoreValueCount = signal_count;
  timeline_info.pSignalSemaphoreValues = signal_values;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &timeline_info;
  submit.waitSemaphoreCount = wait_count;
  submit.pWaitSemaphores = waits;
  submit.pWaitDstStageMask = stages;
  submit.signalSemaphoreCount = signal_count;
  submit.pSignalSemaphores = signals;
  HS_RETURN_IF_ERROR(vk_status(vkQueueSubmit(context.queue(), 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit")
                         .with_context("failed to submit the wait and signal of the caller's semaphores: "));
  return value;
}

Result<uint64_t> GpuTransfers::submit(VkCommandBuffer cmd, const GpuStepSync& sync, VkCommandBuffer before,
                                      VkCommandBuffer after) {
  const CommandBufferList cmds(before, cmd, after);
  GpuSubmit batch;
  batch.command_buffers = cmds.span();
  batch.wait_value = sync.wait_value;
  batch.signal = sync.signal;
  HS_ASSIGN_OR_RETURN(const uint64_t value, pool_.submit(batch));
  if (sync.queue_wait_idle_after) HS_RETURN_IF_ERROR(context_->wait_idle());
  return value;
}

}  // namespace hetsched
