#include "scheduler/handoff.h"

#include <spdlog/spdlog.h>

#include <cstring>

#include "scheduler/layout.h"
#include "scheduler/shaders/layout_permute_spv.h"
#include "shared_gpu/vk_check.h"

namespace hetsched {

Result<std::unique_ptr<ExecutorGpu>> ExecutorGpu::create(std::shared_ptr<SharedGpuContext> context) {
  auto gpu = std::make_unique<ExecutorGpu>();
  gpu->context_ = std::move(context);
  HS_ASSIGN_OR_RETURN(gpu->pool_, CommandPool::create(*gpu->context_));
  ComputePipelineDesc desc;
  desc.name = "layout_permute";
  desc.spirv = kLayoutPermuteSpv;
  desc.storage_buffer_count = 2;
  desc.push_constant_size = 5 * sizeof(uint32_t);
  HS_ASSIGN_OR_RETURN(gpu->permute_, ComputePipeline::create(*gpu->context_, desc));
  // One set per device copy with a layout change; 64 is generous for a model.
  HS_ASSIGN_OR_RETURN(gpu->descriptors_, DescriptorPool::create(*gpu->context_, 64, 2));
  return gpu;
}

namespace {

bool needs_permute(const TensorType& type, TensorLayout a, TensorLayout b) {
  return a != b && layout_applies(type);
}

std::string layout_note(const TensorType& type, TensorLayout from, TensorLayout to) {
  if (!needs_permute(type, from, to)) return "";
  return std::string(" + ") + std::string(tensor_layout_name(from)) + "→" + std::string(tensor_layout_name(to));
}

// Waits on the host until the context's GPU work of this run is done, when
// anything is outstanding. Readbacks call it before reading; the readback
// counts as the one host wait either way (it blocks on its own copy too).
Status wait_for_context(RunState& state, SharedGpuContext& context) {
  auto it = state.last_signalled.find(&context);
  if (it == state.last_signalled.end() || it->second == 0) return Status::ok();
  HS_RETURN_IF_ERROR(context.wait(it->second));
  it->second = 0;
  return Status::ok();
}

class UploadStep final : public HandoffStep {
 public:
  UploadStep(int tensor, TensorType type, DeviceEnd to, std::string label)
      : tensor_(tensor), type_(std::move(type)), to_(to), label_(std::move(label)) {}

  Status run(RunState& state) override {
    const Tensor& src = (*state.slots)[tensor_];
    std::span<const std::byte> bytes(src.raw(), src.byte_size());
    if (needs_permute(type_, TensorLayout::kNchw, to_.tensor->layout)) {
      scratch_.resize(src.byte_size());
      permute_layout(src.raw(), scratch_.data(), type_.shape, dtype_size(type_.dtype), true);
      bytes = scratch_;
    }
    // A mapped buffer is written directly; otherwise upload() stages and waits.
    if (!to_.tensor->buffer->mapped()) state.host_waits++;
    HS_RETURN_IF_ERROR(upload(to_.gpu->pool(), *to_.tensor->buffer, bytes, to_.tensor->offset));
    state.ready.erase({tensor_, to_.island});
    return Status::ok();
  }
  std::string label() const override { return label_ + layout_note(type_, TensorLayout::kNchw, to_.tensor->layout); }

 private:
  int tensor_;
  TensorType type_;
  DeviceEnd to_;
  std::string label_;
  std::vector<std::byte> scratch_;
};

class ReadbackStep final : public HandoffStep {
 public:
  ReadbackStep(int tensor, TensorType type, DeviceEnd from, std::string label)
      : tensor_(tensor), type_(std::move(type)), from_(from), label_(std::move(label)) {}

  Status run(RunState& state) override {
    Tensor& dst = (*state.slots)[tensor_];
    HS_RETURN_IF_ERROR(wait_for_context(state, from_.gpu->context()));
    state.host_waits++;
    const bool permute = needs_permute(type_, from_.tensor->layout, TensorLayout::kNchw);
    std::span<std::byte> out(dst.raw(), dst.byte_size());
    if (permute) {
      scratch_.resize(dst.byte_size());
      out = scratch_;
    }
    // readback() puts a barrier before the host reads (and stages device-local
    // memory); it waits on the host for that small submit.
    HS_RETURN_IF_ERROR(readback(from_.gpu->pool(), *from_.tensor->buffer, out, from_.tensor->offset, &staging_));
    if (permute) permute_layout(scratch_.data(), dst.raw(), type_.shape, dtype_size(type_.dtype), false);
    return Status::ok();
  }
  std::string label() const override { return label_ + layout_note(type_, from_.tensor->layout, TensorLayout::kNchw); }

 private:
  int tensor_;
  TensorType type_;
  DeviceEnd from_;
  std::string label_;
  std::vector<std::byte> scratch_;
  Buffer staging_;  // host-cached copy target, kept across runs
};

// Both islands on one context: a command buffer, recorded once, that copies
// (or permutes) the producer's output buffer into the consumer's input buffer.
class DeviceCopyStep final : public HandoffStep {
 public:
  static Result<std::unique_ptr<HandoffStep>> create(int tensor, const TensorType& type, DeviceEnd from, DeviceEnd to,
                                                     std::string label) {
    auto step = std::unique_ptr<DeviceCopyStep>(new DeviceCopyStep(tensor, type, from, to, std::move(label)));
    HS_RETURN_IF_ERROR(step->record());
    return std::unique_ptr<HandoffStep>(std::move(step));
  }

  Status run(RunState& state) override {
    SharedGpuContext& context = to_.gpu->context();
    auto it = state.ready.find({tensor_, from_.island});
    const uint64_t wait_for = it == state.ready.end() ? 0 : it->second;
    const GpuStepSync sync = plan_gpu_step(state.mode, wait_for);
    GpuSubmit submit;
    submit.command_buffers = std::span<const VkCommandBuffer>(&cmd_, 1);
    submit.wait_value = sync.wait_value;
    submit.signal = sync.signal;
    HS_ASSIGN_OR_RETURN(const uint64_t signalled, to_.gpu->pool().submit(submit));
    if (signalled) {
      state.ready[{tensor_, to_.island}] = signalled;
      state.last_signalled[&context] = std::max(state.last_signalled[&context], signalled);
    }
    if (sync.queue_wait_idle_after) {
      HS_RETURN_IF_ERROR(context.wait_idle());
      state.host_waits++;
    }
    return Status::ok();
  }
  std::string label() const override { return label_ + " (device copy" + layout_note(type_, from_.tensor->layout, to_.tensor->layout) + ")"; }

 private:
  DeviceCopyStep(int tensor, TensorType type, DeviceEnd from, DeviceEnd to, std::string label)
      : tensor_(tensor), type_(std::move(type)), from_(from), to_(to), label_(std::move(label)) {}

  Status record() {
    ExecutorGpu& gpu = *to_.gpu;
    HS_ASSIGN_OR_RETURN(cmd_, gpu.pool().allocate());
    const bool permute = needs_permute(type_, from_.tensor->layout, to_.tensor->layout);
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (permute) {
      if (dtype_size(type_.dtype) != 4)
        return unsupported("failed to plan device copy of " + type_.to_string() +
                           ": layout conversion on the GPU handles 32-bit elements only");
      const VkDescriptorBufferInfo buffers[2] = {from_.tensor->buffer->descriptor(from_.tensor->offset, from_.tensor->size),
                                                 to_.tensor->buffer->descriptor(to_.tensor->offset, to_.tensor->size)};
      HS_ASSIGN_OR_RETURN(set, gpu.descriptors().allocate(gpu.permute(), buffers));
    }
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    HS_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(cmd_, &begin));
    // The producer island wrote its output in a shader (or a transfer).
    const VkPipelineStageFlags producer_stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    const VkAccessFlags producer_writes = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    if (permute) {
      record_memory_barrier(cmd_, producer_stages, producer_writes, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_ACCESS_SHADER_READ_BIT);
      const uint32_t params[5] = {static_cast<uint32_t>(type_.shape[0]), static_cast<uint32_t>(type_.shape[1]),
                                  static_cast<uint32_t>(type_.shape[2]), static_cast<uint32_t>(type_.shape[3]),
                                  to_.tensor->layout == TensorLayout::kNhwc ? 1u : 0u};
      const uint64_t groups = group_count(static_cast<uint64_t>(type_.num_elements()), 256);
      const uint32_t gx = static_cast<uint32_t>(std::min<uint64_t>(groups, 65535));
      const uint32_t gy = static_cast<uint32_t>((groups + gx - 1) / gx);
      record_dispatch(cmd_, gpu.permute(), set, std::as_bytes(std::span(params)), gx, gy);
    } else {
      record_memory_barrier(cmd_, producer_stages, producer_writes, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_ACCESS_TRANSFER_READ_BIT);
      VkBufferCopy region{from_.tensor->offset, to_.tensor->offset, type_.byte_size()};
      vkCmdCopyBuffer(cmd_, from_.tensor->buffer->handle(), to_.tensor->buffer->handle(), 1, &region);
    }
    // The consumer island reads its input in a shader (or a transfer), and the
    // host may read it back.
    record_memory_barrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
    HS_VK_RETURN_IF_ERROR(vkEndCommandBuffer(cmd_));
    return Status::ok();
  }

  int tensor_;
  TensorType type_;
  DeviceEnd from_;
  DeviceEnd to_;
  std::string label_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;  // freed with the executor's pool
};

// Islands on different contexts: no shared memory, so through the host.
class HostRoundTripStep final : public HandoffStep {
 public:
  HostRoundTripStep(int tensor, const TensorType& type, DeviceEnd from, DeviceEnd to, std::string label)
      : readback_(tensor, type, from, label), upload_(tensor, type, to, label), label_(std::move(label)) {}
  Status run(RunState& state) override {
    HS_RETURN_IF_ERROR(readback_.run(state));
    return upload_.run(state);
  }
  std::string label() const override { return label_ + " (through the host: different GPU contexts)"; }

 private:
  ReadbackStep readback_;
  UploadStep upload_;
  std::string label_;
};

}  // namespace

std::unique_ptr<HandoffStep> make_upload(int tensor, const TensorType& type, DeviceEnd to, std::string label) {
  return std::make_unique<UploadStep>(tensor, type, to, std::move(label));
}

std::unique_ptr<HandoffStep> make_readback(int tensor, const TensorType& type, DeviceEnd from, std::string label) {
  return std::make_unique<ReadbackStep>(tensor, type, from, std::move(label));
}

Result<std::unique_ptr<HandoffStep>> make_device_copy(int tensor, const TensorType& type, DeviceEnd from,
                                                      DeviceEnd to, std::string label) {
  if (&from.gpu->context() != &to.gpu->context())
    return std::unique_ptr<HandoffStep>(new HostRoundTripStep(tensor, type, from, to, std::move(label)));
  return DeviceCopyStep::create(tensor, type, from, to, std::move(label));
}

}  // namespace hetsched
