#include "delegates/vulkan/vulkan_island.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "shared_gpu/gpu_timestamps.h"
#include "shared_gpu/vk_check.h"

namespace hetsched::vulkan {

namespace {

// Constants are uploaded through staging buffers of at most this size (or
// one constant, when a single one is larger), so a big model does not need
// a second copy of all its weights in host-visible memory at once.
constexpr VkDeviceSize kStagingChunk = VkDeviceSize{64} << 20;

constexpr VkBufferUsageFlags kStorageAndTransfer =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// Every step reads and writes through shaders or transfers; one barrier
// shape covers all their hazards.
constexpr VkPipelineStageFlags kStepStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kStepWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kStepAccess =
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

}  // namespace

Result<std::unique_ptr<VulkanIsland>> VulkanIsland::create(std::shared_ptr<SharedGpuContext> context,
                                                           std::shared_ptr<DelegatePool> pool,
                                                           std::shared_ptr<KernelLibrary> library,
                                                           LoweredIsland lowered, const VulkanIslandOptions& options,
                                                           const DevicePlacement* placement) {
  std::unique_ptr<VulkanIsland> island(new VulkanIsland());
  island->context_ = std::move(context);
  island->pool_ = std::move(pool);
  island->library_ = std::move(library);
  island->options_ = options;
  island->node_count_ = lowered.node_count;
  island->dispatch_count_ = lowered.dispatch_count();
  island->copy_count_ = lowered.copy_count();
  HS_RETURN_IF_ERROR(island->allocate_buffers(lowered, placement));
  HS_RETURN_IF_ERROR(island->upload_constants(lowered));
  HS_RETURN_IF_ERROR(island->record(lowered));
  for (const auto* list : {&lowered.input_buffers, &lowered.output_buffers})
    for (int b : *list) {
      const View& v = island->views_[b];
      (list == &lowered.input_buffers ? island->inputs_ : island->outputs_)
          .push_back({v.buffer, v.offset, lowered.buffers[b].bytes, TensorLayout::kNchw});
    }
  return island;
}

VulkanIsland::~VulkanIsland() {
  if (!context_) return;
  Status drained;
  if (unsignalled_pending_.load()) {
    drained = context_->wait_idle();
  } else if (last_signalled_.load() != 0) {
    drained = context_->wait(last_signalled_.load());
  }
  // A lost device runs nothing more: its failed waits are no news.
  if (!drained.is_ok() && context_->lost().is_ok())
    spdlog::warn("[Vulkan] failed to drain island {} before destroying it: {}", options_.island_id, drained.message());
  if (command_buffer_ != VK_NULL_HANDLE) {
    std::lock_guard lock(pool_->mutex);
    pool_->pool.free(command_buffer_);
  }
}

Status VulkanIsland::allocate_buffers(const LoweredIsland& lowered, const DevicePlacement* placement) {
  const DeviceMemoryNeeds needs = device_memory_needs(lowered);
  owned_.reserve(lowered.buffers.size() + 1);  // views point into owned_: it never reallocates
  DevicePlacement own;
  if (!placement) {
    uint64_t total = 0;
    own = pack_placement(needs, total);
    Result<Buffer> arena = Buffer::create_arena(*context_, total);
    if (!arena.is_ok())
      return arena.status().with_context("failed to allocate the island's memory (" + std::to_string(total) +
                                         " bytes): ");
    owned_.push_back(std::move(arena).value());
    own.arena = &owned_.back();
    placement = &own;
  }
  HS_RETURN_IF_ERROR(check_placement(needs, *placement, placement->arena->size(),
                                     context_->limits().minStorageBufferOffsetAlignment));
  views_.resize(lowered.buffers.size());
  for (size_t i = 0; i < lowered.input_buffers.size(); ++i)
    views_[lowered.input_buffers[i]] = {placement->arena, placement->input_offsets[i], needs.input_bytes[i]};
  for (size_t i = 0; i < lowered.output_buffers.size(); ++i)
    views_[lowered.output_buffers[i]] = {placement->arena, placement->output_offsets[i], needs.output_bytes[i]};
  for (size_t b = 0; b < lowered.buffers.size(); ++b) {
    const BufferPlan& plan = lowered.buffers[b];
    const uint64_t bytes = std::max<uint64_t>(plan.bytes, 4);
    if (plan.role == BufferPlan::Role::kIntermediate) {
      views_[b] = {placement->arena, placement->scratch_offset + plan.offset, bytes};
    } else if (plan.role == BufferPlan::Role::kConstant) {
      Result<Buffer> buffer = Buffer::create(*context_, bytes, kStorageAndTransfer, MemoryUsage::kDeviceLocal);
      if (!buffer.is_ok())
        return buffer.status().with_context("failed to allocate buffer '" + plan.name + "' (" + std::to_string(bytes) +
                                            " bytes): ");
      owned_.push_back(std::move(buffer).value());
      views_[b] = {&owned_.back(), 0, bytes};
    } else if (!views_[b].buffer) {
      return internal_error("failed to allocate buffer '" + plan.name + "': an input or output the island does not list");
    }
  }
  return Status::ok();
}

Status VulkanIsland::upload_constants(const LoweredIsland& lowered) {
  std::vector<size_t> pending;
  for (size_t i = 0; i < lowered.buffers.size(); ++i)
    if (lowered.buffers[i].role == BufferPlan::Role::kConstant && !lowered.buffers[i].data.empty())
      pending.push_back(i);
  std::lock_guard lock(pool_->mutex);
  for (size_t first = 0; first < pending.size();) {
    VkDeviceSize total = 0;
    size_t last = first;
    while (last < pending.size() &&
           (last == first || total + lowered.buffers[pending[last]].data.size() <= kStagingChunk))
      total += lowered.buffers[pending[last++]].data.size();
    HS_ASSIGN_OR_RETURN(Buffer staging,
                        Buffer::create(*context_, total, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemoryUsage::kUpload));
    std::vector<std::pair<size_t, VkDeviceSize>> copies;  // buffer, offset in staging
    VkDeviceSize offset = 0;
    for (size_t i = first; i < last; ++i) {
      const std::vector<std::byte>& data = lowered.buffers[pending[i]].data;
      std::memcpy(staging.mapped() + offset, data.data(), data.size());
      copies.emplace_back(pending[i], offset);
      offset += data.size();
    }
    HS_RETURN_IF_ERROR(pool_->pool.run_one_shot([&](VkCommandBuffer cmd) {
      for (const auto& [buffer, at] : copies) {
        const VkBufferCopy region{at, 0, lowered.buffers[buffer].data.size()};
        vkCmdCopyBuffer(cmd, staging.handle(), views_[buffer].buffer->handle(), 1, &region);
      }
      record_memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                            VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT);
    }));
    first = last;
  }
  return Status::ok();
}

Status VulkanIsland::record(const LoweredIsland& lowered) {
  uint32_t max_bindings = 1;
  for (const Step& step : lowered.steps) max_bindings = std::max<uint32_t>(max_bindings, step.bindings.size());
  HS_ASSIGN_OR_RETURN(descriptors_,
                      DescriptorPool::create(*context_, std::max<uint32_t>(1, dispatch_count_), max_bindings));
  std::vector<VkDescriptorSet> sets(lowered.steps.size(), VK_NULL_HANDLE);
  std::vector<const ComputePipeline*> pipelines(lowered.steps.size(), nullptr);
  for (size_t i = 0; i < lowered.steps.size(); ++i) {
    const Step& step = lowered.steps[i];
    if (step.kind != Step::Kind::kDispatch) continue;
    HS_ASSIGN_OR_RETURN(pipelines[i], library_->pipeline(step.kernel, step.specialization, step.half_bindings));
    std::vector<VkDescriptorBufferInfo> infos;
    for (int b : step.bindings) infos.push_back(views_[b].descriptor());
    HS_ASSIGN_OR_RETURN(sets[i], descriptors_.allocate(*pipelines[i], infos));
  }

  if (options_.gpu_timestamps) {
    auto pool = create_timestamp_query_pool(*context_, 2);
    if (!pool.is_ok()) return pool.status().with_context("failed to record Vulkan island: ");
    timestamps_ = std::move(pool).value();
  }

  const uint32_t step_count = static_cast<uint32_t>(lowered.steps.size());
  if (options_.profile_ops && queue_has_timestamps(*context_)) {
    auto pool = create_timestamp_query_pool(*context_, step_count + 1);
    if (!pool.is_ok()) return pool.status().with_context("failed to record Vulkan island: ");
    step_stamps_ = std::move(pool).value();
    for (const Step& step : lowered.steps) {
      OpTiming piece;
      piece.kind = step.kind == Step::Kind::kCopy ? "copy" : "dispatch";
      piece.nodes = step.node_names;
      piece.ops = step.node_ops;
      step_pieces_.push_back(std::move(piece));
    }
  }

  std::lock_guard lock(pool_->mutex);
  HS_ASSIGN_OR_RETURN(command_buffer_, pool_->pool.allocate());
  const VkCommandBuffer cmd = command_buffer_;
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  // Runs of one island may be queued before the previous one finished
  // (sync mode none, pipelined requests).
  begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  HS_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(cmd, &begin));
  if (timestamps_) {
    vkCmdResetQueryPool(cmd, timestamps_.get(), 0, 2);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_.get(), 0);
  }
  // Work submitted earlier (the executor's uploads and copies, the previous
  // run of this island) finishes writing, and stops reading, before this
  // run touches its buffers.
  record_memory_barrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT, kStepStages, kStepAccess);
  if (step_stamps_) {
    // A stamp after each step: step i took from stamp i to stamp i + 1.
    vkCmdResetQueryPool(cmd, step_stamps_.get(), 0, step_count + 1);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, step_stamps_.get(), 0);
  }
  for (size_t i = 0; i < lowered.steps.size(); ++i) {
    const Step& step = lowered.steps[i];
    if (i > 0 && step_stamps_)
      vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, step_stamps_.get(), static_cast<uint32_t>(i));
    if (step.barrier_before) {
      record_memory_barrier(cmd, kStepStages, kStepWrites, kStepStages, kStepAccess);
      ++barrier_count_;
    }
    if (step.kind == Step::Kind::kCopy) {
      const View& src = views_[step.reads[0]];
      const View& dst = views_[step.writes[0]];
      const VkBufferCopy region{src.offset, dst.offset, step.copy_bytes};
      vkCmdCopyBuffer(cmd, src.buffer->handle(), dst.buffer->handle(), 1, &region);
      continue;
    }
    record_dispatch(cmd, *pipelines[i], sets[i], std::as_bytes(std::span(step.push_constants)), step.groups[0],
                    step.groups[1], step.groups[2]);
  }
  if (step_stamps_) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, step_stamps_.get(), step_count);
  // Results become visible to whatever reads them next: later submissions
  // (copies, other islands) and the host, once it has waited for the run.
  record_memory_barrier(cmd, kStepStages, kStepWrites, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                        VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT);
  if (timestamps_) vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_.get(), 1);
  HS_VK_RETURN_IF_ERROR(vkEndCommandBuffer(cmd));
  return Status::ok();
}

MemoryDomain VulkanIsland::input_domain(size_t i) const {
  (void)i;
  return MemoryDomain{MemoryDomain::Kind::kDevice, options_.context_key};
}

MemoryDomain VulkanIsland::output_domain(size_t i) const {
  (void)i;
  return MemoryDomain{MemoryDomain::Kind::kDevice, options_.context_key};
}

const DeviceTensor* VulkanIsland::device_input(size_t i) const { return i < inputs_.size() ? &inputs_[i] : nullptr; }

const DeviceTensor* VulkanIsland::device_output(size_t i) const { return i < outputs_.size() ? &outputs_[i] : nullptr; }

Status VulkanIsland::execute(ExecContext& ctx, std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) {
  (void)inputs;
  (void)outputs;
  GpuSubmit batch;
  const CommandBufferList cmds(ctx.gpu_before, command_buffer_, ctx.gpu_after, ctx.gpu_then);
  batch.command_buffers = cmds.span();
  batch.wait_value = ctx.gpu.wait_value;
  batch.signal = ctx.gpu.signal;
  Result<uint64_t> signalled = context_->submit(batch);
  if (!signalled.is_ok())
    return signalled.status().with_context("failed to execute Vulkan island " + std::to_string(options_.island_id) +
                                           ": ");
  ctx.signalled_value = *signalled;
  executed_ = true;
  if (*signalled != 0) {
    last_signalled_ = *signalled;
    unsignalled_pending_ = false;
  } else {
    unsignalled_pending_ = true;
  }
  if (ctx.gpu.queue_wait_idle_after) {
    HS_RETURN_IF_ERROR(context_->wait_idle());
    unsignalled_pending_ = false;
  }
  spdlog::debug("[Vulkan] execute: island {}, wait t={}, signal t={}", options_.island_id, ctx.gpu.wait_value,
                *signalled);
  return Status::ok();
}

Result<double> VulkanIsland::last_gpu_seconds() const {
  if (!timestamps_) return failed_precondition("failed to read GPU time: island made without gpu_timestamps");
  if (!executed_) return failed_precondition("failed to read GPU time: the island has not run yet");
  uint64_t ticks[2] = {};
  HS_VK_RETURN_IF_ERROR(vkGetQueryPoolResults(context_->device(), timestamps_.get(), 0, 2, sizeof(ticks), ticks,
                                              sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  return static_cast<double>(ticks[1] - ticks[0]) * context_->limits().timestampPeriod * 1e-9;
}

Result<std::vector<OpTiming>> VulkanIsland::op_timings() const {
  if (!step_stamps_ || !executed_) return std::vector<OpTiming>{};
  std::vector<uint64_t> ticks(step_pieces_.size() + 1);
  HS_VK_RETURN_IF_ERROR(vkGetQueryPoolResults(context_->device(), step_stamps_.get(), 0,
                                              static_cast<uint32_t>(ticks.size()), ticks.size() * sizeof(uint64_t),
                                              ticks.data(), sizeof(uint64_t),
                                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  const double ms_per_tick = context_->limits().timestampPeriod * 1e-6;
  std::vector<OpTiming> timings = step_pieces_;
  for (size_t i = 0; i < timings.size(); ++i) {
    timings[i].start_ms = static_cast<double>(ticks[i] - ticks[0]) * ms_per_tick;
    timings[i].ms = static_cast<double>(ticks[i + 1] - ticks[i]) * ms_per_tick;
  }
  return timings;
}

}  // namespace hetsched::vulkan
