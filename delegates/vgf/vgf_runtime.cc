#include "delegates/vgf/vgf_runtime.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <span>

#include "delegates/vgf/shaders/binary_spv.h"
#include "delegates/vgf/shaders/cast_f16_to_f32_spv.h"
#include "delegates/vgf/shaders/cast_f32_to_f16_spv.h"
#include "delegates/vgf/shaders/cast_from_bool_spv.h"
#include "delegates/vgf/shaders/cast_to_bool_spv.h"
#include "delegates/vgf/shaders/cast_words_spv.h"
#include "delegates/vgf/shaders/copy_spv.h"
#include "delegates/vgf/shaders/matmul_spv.h"
#include "delegates/vgf/shaders/pad_spv.h"
#include "delegates/vgf/shaders/pool2d_spv.h"
#include "delegates/vgf/shaders/reduce_spv.h"
#include "delegates/vgf/shaders/resize_spv.h"
#include "delegates/vgf/shaders/select_spv.h"
#include "delegates/vgf/shaders/transpose_conv2d_spv.h"
#include "delegates/vgf/shaders/unary_spv.h"
#include "delegates/vgf/shaders/binary_half_spv.h"
#include "delegates/vgf/shaders/copy_half_spv.h"
#include "delegates/vgf/shaders/matmul_half_spv.h"
#include "delegates/vgf/shaders/pad_half_spv.h"
#include "delegates/vgf/shaders/pool2d_half_spv.h"
#include "delegates/vgf/shaders/reduce_half_spv.h"
#include "delegates/vgf/shaders/resize_half_spv.h"
#include "delegates/vgf/shaders/select_half_spv.h"
#include "delegates/vgf/shaders/transpose_conv2d_half_spv.h"
#include "delegates/vgf/shaders/unary_half_spv.h"
#include "delegates/vgf/dispatch_barriers.h"
#include "delegates/vgf/half_storage.h"
#include "delegates/vgf/transient_planner.h"
#include "shared_gpu/conv_kernel.h"
#include "shared_gpu/gpu_timestamps.h"
#include "shared_gpu/vk_check.h"

namespace hetsched::vgf {

namespace {

// `half`: the variant with 16-bit storage between kernels (half_io.glsl),
// which the casts have not (dispatch_plan.h's kernel_half_capable_bindings).
std::span<const uint32_t> builtin_spirv(Kernel kernel, bool half) {
  switch (kernel) {
    case Kernel::kUnary: return half ? std::span<const uint32_t>(kUnaryHalfSpv) : kUnarySpv;
    case Kernel::kBinary: return half ? std::span<const uint32_t>(kBinaryHalfSpv) : kBinarySpv;
    case Kernel::kCopy: return half ? std::span<const uint32_t>(kCopyHalfSpv) : kCopySpv;
    case Kernel::kPad: return half ? std::span<const uint32_t>(kPadHalfSpv) : kPadSpv;
    // Shared with the Vulkan delegate.
    case Kernel::kConv2d: return gpu::conv2d_spirv(half);
    case Kernel::kConv2dCoopmat: return gpu::conv2d_coopmat_spirv(half);
    case Kernel::kConv2dReduce: return gpu::conv2d_reduce_spirv(half);
    case Kernel::kDepthwiseConv2d: return gpu::depthwise_conv2d_spirv(half);
    case Kernel::kSeScale: return gpu::se_scale_spirv(half);
    case Kernel::kPointwiseConv: return gpu::pointwise_conv_spirv(half);
    case Kernel::kDepthwiseMean: return gpu::depthwise_mean_spirv(half);
    case Kernel::kPool2d: return half ? std::span<const uint32_t>(kPool2dHalfSpv) : kPool2dSpv;
    case Kernel::kMatmul: return half ? std::span<const uint32_t>(kMatmulHalfSpv) : kMatmulSpv;
    case Kernel::kReduce: return half ? std::span<const uint32_t>(kReduceHalfSpv) : kReduceSpv;
    case Kernel::kResize: return half ? std::span<const uint32_t>(kResizeHalfSpv) : kResizeSpv;
    case Kernel::kSelect: return half ? std::span<const uint32_t>(kSelectHalfSpv) : kSelectSpv;
    case Kernel::kTransposeConv2d: return half ? std::span<const uint32_t>(kTransposeConv2dHalfSpv) : kTransposeConv2dSpv;
    case Kernel::kCastF16ToF32: return kCastF16ToF32Spv;
    case Kernel::kCastF32ToF16: return kCastF32ToF16Spv;
    case Kernel::kCastWords: return kCastWordsSpv;
    case Kernel::kCastToBool: return kCastToBoolSpv;
    case Kernel::kCastFromBool: return kCastFromBoolSpv;
    case Kernel::kCustom: break;
  }
  return {};
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

constexpr VkBufferUsageFlags kIoUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

}  // namespace

VgfSession::VgfSession(std::shared_ptr<SharedGpuContext> context, std::shared_ptr<DelegatePool> pool, VgfFile file,
                       int island_id)
    : context_(std::move(context)), pool_(std::move(pool)), file_(std::move(file)), island_id_(island_id) {}

VgfSession::~VgfSession() {
  // Nothing below may be freed while a submit still uses it.
  // A lost device runs nothing more: there is nothing to drain.
  const bool lost = !context_->lost().is_ok();
  if (last_signalled_ > 0 && !lost) {
    if (Status s = context_->wait(last_signalled_); !s.is_ok())
      spdlog::error("[VGF] failed to wait for island {} before teardown: {}", island_id_, s.message());
  } else if (unsignalled_submit_ && !lost) {
    if (Status s = context_->wait_idle(); !s.is_ok())
      spdlog::error("[VGF] failed to idle the queue for island {} before teardown: {}", island_id_, s.message());
  }
  if (command_buffer_ != VK_NULL_HANDLE) {
    std::lock_guard lock(pool_->mutex);
    pool_->pool.free(command_buffer_);
  }
}

Result<std::unique_ptr<VgfSession>> VgfSession::create(std::shared_ptr<SharedGpuContext> context,
                                                       std::shared_ptr<DelegatePool> pool, VgfFile file,
                                                       int island_id, const DevicePlacement* placement,
                                                       bool profile_ops, std::optional<gpu::CoopMatConv> coopmat,
                                                       bool half_storage) {
  if (!context || !pool) return invalid_argument("failed to create VGF session: no GPU context or command pool");
  if (Status s = check_vgf(file); !s.is_ok()) return s.with_context("failed to create VGF session: ");
  if (half_storage) {
    if (!context->features().storage_buffer_16bit_access)
      return unsupported("failed to create VGF session: f16 storage between kernels needs storageBuffer16BitAccess, "
                         "which device '" + std::string(context->device_name()) + "' lacks");
    file = with_half_storage(file);
  }
  std::unique_ptr<VgfSession> session(new VgfSession(std::move(context), std::move(pool), std::move(file), island_id));
  session->coopmat_ = coopmat;
  if (Status s = session->build(placement, profile_ops); !s.is_ok())
    return s.with_context("failed to create VGF session for island " + std::to_string(island_id) + ": ");
  return session;
}

Status VgfSession::build(const DevicePlacement* placement, bool profile_ops) {
  const DispatchPlan plan = plan_dispatches(file_, coopmat_);
  HS_RETURN_IF_ERROR(allocate_memory(placement, plan));
  HS_RETURN_IF_ERROR(make_pipelines(plan));
  if (profile_ops && queue_has_timestamps(*context_)) {
    HS_ASSIGN_OR_RETURN(dispatch_stamps_,
                        create_timestamp_query_pool(*context_, static_cast<uint32_t>(plan.dispatch_count() + 1)));
    for (const SegmentDispatches& seg : plan.segments)
      for (const Dispatch& d : seg.dispatches) {
        OpTiming piece;
        piece.kind = "dispatch";
        piece.nodes = d.nodes;
        piece.ops = d.ops;
        dispatch_pieces_.push_back(std::move(piece));
      }
  }
  return record();
}

// Transients go at the offsets of the scratch block (transient_planner.h),
// inputs and outputs at the placement's, all in one arena: the session's,
// or one of the island's own.
Status VgfSession::allocate_memory(const DevicePlacement* placement, const DispatchPlan& plan) {
  const auto& resources = file_.resources;
  // Each resource is bound whole to one storage-buffer descriptor.
  const uint64_t max_range = context_->limits().maxStorageBufferRange;
  for (size_t id = 0; id < resources.size(); ++id) {
    // A file made elsewhere (run-vgf) may hold casts this device cannot run.
    if (is_half_float(resources[id].dtype) && !context_->features().storage_buffer_16bit_access)
      return unsupported("resource " + std::to_string(id) + " ('" + resources[id].name + "') is " +
                         std::string(dtype_name(resources[id].dtype)) +
                         ": it needs storageBuffer16BitAccess, which this device lacks");
    if (resources[id].dtype == DType::kBool && !context_->features().storage_buffer_8bit_access)
      return unsupported("resource " + std::to_string(id) + " ('" + resources[id].name +
                         "') is bool: its cast needs storageBuffer8BitAccess, which this device lacks");
    if (resources[id].bytes() > max_range)
      return unsupported("resource " + std::to_string(id) + " ('" + resources[id].name + "') of " +
                         std::to_string(resources[id].bytes()) + " bytes exceeds the device's maxStorageBufferRange (" +
                         std::to_string(max_range) + ")");
  }
  for (const DerivedBuffer& d : plan.derived)
    if (d.oversized_bytes > 0 || d.bytes() > max_range)
      return unsupported("buffer '" + d.name + "' of " + std::to_string(std::max(d.bytes(), d.oversized_bytes)) +
                         " bytes exceeds the device's maxStorageBufferRange (" + std::to_string(max_range) +
                         ") or the planner's limit (" + std::to_string(kMaxDerivedBytes) + ")");
  HS_ASSIGN_OR_RETURN(const TransientLayout transients, plan_transients(file_, plan));
  const DeviceMemoryNeeds needs = vgf_memory_needs(file_, transients);
  transient_bytes_ = transients.bytes;
  barrier_before_ = plan_dispatch_barriers(file_, plan, transients);
  transient_lower_bound_ = transients.lower_bound;
  DevicePlacement own;
  if (!placement) {
    uint64_t total = 0;
    own = pack_placement(needs, total);
    HS_ASSIGN_OR_RETURN(own_arena_, Buffer::create_arena(*context_, total));
    own.arena = &own_arena_;
    placement = &own;
  }
  HS_RETURN_IF_ERROR(check_placement(needs, *placement, placement->arena->size(),
                                     context_->limits().minStorageBufferOffsetAlignment));
  const uint64_t alignment =
      std::max<uint64_t>(kSectionAlignment, context_->limits().minStorageBufferOffsetAlignment);
  const size_t ids = resources.size() + plan.derived.size();
  placements_.assign(ids, {});

  // Constants a dispatch reads (a conv's weights in the file are read only
  // to arrange the derived ones), then the derived constant buffers,
  // re-laid at the device's descriptor offset alignment; derived scratch
  // in a buffer of its own.
  std::vector<bool> bound(ids, false);
  for (const SegmentDispatches& seg : plan.segments)
    for (const Dispatch& d : seg.dispatches)
      for (uint32_t id : d.bindings) bound[id] = true;
  std::vector<uint8_t> constant_bytes;
  std::vector<uint64_t> constant_offset(ids, 0);
  uint64_t scratch_bytes = 0;
  for (size_t id = 0; id < ids; ++id) {
    if (!bound[id]) continue;
    const bool derived = id >= resources.size();
    const DerivedBuffer* d = derived ? &plan.derived[id - resources.size()] : nullptr;
    if (d && d->words.empty()) {
      constant_offset[id] = align_up(scratch_bytes, alignment);
      scratch_bytes = constant_offset[id] + d->scratch_bytes;
      continue;
    }
    if (!d && resources[id].kind != ResourceKind::kConstant) continue;
    const uint64_t size = d ? d->bytes() : resources[id].constant_size;
    const uint8_t* src = d ? reinterpret_cast<const uint8_t*>(d->words.data())
                           : file_.constants.data() + resources[id].constant_offset;
    constant_offset[id] = align_up(constant_bytes.size(), alignment);
    constant_bytes.resize(constant_offset[id] + size, 0);
    std::memcpy(constant_bytes.data() + constant_offset[id], src, size);
  }
  if (scratch_bytes > 0) {
    HS_ASSIGN_OR_RETURN(scratch_, Buffer::create(*context_, scratch_bytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                                 MemoryUsage::kDeviceLocal));
  }
  if (!constant_bytes.empty()) {
    HS_ASSIGN_OR_RETURN(constants_, Buffer::create(*context_, constant_bytes.size(),
                                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                                   MemoryUsage::kDeviceLocal));
    std::lock_guard lock(pool_->mutex);
    HS_RETURN_IF_ERROR(upload(pool_->pool, constants_, std::as_bytes(std::span(constant_bytes))));
  }

  // Island I/O: ranges of the arena, so handoffs and the host can reach them.
  for (const auto* list : {&file_.inputs, &file_.outputs}) {
    const bool inputs = list == &file_.inputs;
    for (size_t i = 0; i < list->size(); ++i) {
      const uint32_t id = (*list)[i];
      const uint64_t offset = inputs ? placement->input_offsets[i] : placement->output_offsets[i];
      placements_[id] = {placement->arena, offset, resources[id].bytes()};
      (inputs ? inputs_ : outputs_).push_back({placement->arena, offset, resources[id].bytes(), resources[id].layout});
    }
  }
  for (size_t id = 0; id < resources.size(); ++id) {
    const Resource& r = resources[id];
    if (r.kind == ResourceKind::kConstant && bound[id]) placements_[id] = {&constants_, constant_offset[id], r.bytes()};
    if (r.kind == ResourceKind::kIntermediate && transients.offsets[id] >= 0)
      placements_[id] = {placement->arena, placement->scratch_offset + static_cast<uint64_t>(transients.offsets[id]),
                         r.bytes()};
  }
  for (size_t i = 0; i < plan.derived.size(); ++i) {
    const size_t id = resources.size() + i;
    if (!bound[id]) continue;
    const DerivedBuffer& d = plan.derived[i];
    placements_[id] = {d.words.empty() ? &scratch_ : &constants_, constant_offset[id], d.bytes()};
  }
  return Status::ok();
}

VkDescriptorBufferInfo VgfSession::binding(uint32_t resource) const {
  const Placement& p = placements_[resource];
  return p.buffer->descriptor(p.offset, p.bytes);
}

Status VgfSession::make_pipelines(const DispatchPlan& plan) {
  size_t sets = 0;
  uint32_t max_bindings = 1;
  for (const SegmentDispatches& seg : plan.segments)
    for (const Dispatch& d : seg.dispatches) {
      ++sets;
      max_bindings = std::max<uint32_t>(max_bindings, static_cast<uint32_t>(d.bindings.size()));
    }
  HS_ASSIGN_OR_RETURN(descriptors_,
                      DescriptorPool::create(*context_, static_cast<uint32_t>(std::max<size_t>(sets, 1)), max_bindings));
  for (const SegmentDispatches& seg : plan.segments) {
    GraphPipeline pipeline;
    pipeline.name = seg.name;
    for (const Dispatch& d : seg.dispatches) {
      const ComputePipeline* compute = nullptr;
      if (d.kernel == Kernel::kCustom) {
        // A module's SPIR-V reads and writes f32 (half_storage.h keeps what it binds).
        for (uint32_t id : d.bindings)
          if (id < file_.resources.size() && file_.resources[id].dtype != DType::kFloat32)
            return internal_error(d.label + " binds resource " + std::to_string(id) + " ('" +
                                  file_.resources[id].name + "') of dtype " +
                                  std::string(dtype_name(file_.resources[id].dtype)) + ": compute modules read f32");
        std::unique_ptr<ComputePipeline>& slot = custom_[d.module];
        if (!slot) {
          const Module& m = file_.modules[d.module];
          ComputePipelineDesc desc;
          desc.name = "vgf/" + m.name;
          desc.spirv = m.spirv;
          desc.entry_point = m.entry_point;
          desc.storage_buffer_count = static_cast<uint32_t>(d.bindings.size());
          desc.push_constant_size = static_cast<uint32_t>(d.push.size() * sizeof(uint32_t));
          HS_ASSIGN_OR_RETURN(ComputePipeline made, ComputePipeline::create(*context_, desc));
          slot = std::make_unique<ComputePipeline>(std::move(made));
        }
        if (slot->storage_buffer_count() != d.bindings.size() ||
            slot->push_constant_size() != d.push.size() * sizeof(uint32_t))
          return invalid_argument(d.label + " binds its module's shader with other buffers or push constants than another segment");
        compute = slot.get();
      } else {
        std::unique_ptr<ComputePipeline>& slot = builtin_[{d.kernel, d.half_bindings, d.specialization}];
        if (!slot) {
          ComputePipelineDesc desc;
          desc.name = "vgf/" + std::string(kernel_name(d.kernel)) + (d.half_bindings != 0 ? "_half" : "");
          desc.spirv = builtin_spirv(d.kernel, d.half_bindings != 0);
          desc.half_bindings = d.half_bindings;
          desc.storage_buffer_count = kernel_binding_count(d.kernel);
          desc.push_constant_size = kernel_push_words(d.kernel) * sizeof(uint32_t);
          desc.specialization_constants = d.specialization;
          HS_ASSIGN_OR_RETURN(ComputePipeline made, ComputePipeline::create(*context_, desc));
          slot = std::make_unique<ComputePipeline>(std::move(made));
        }
        compute = slot.get();
      }
      std::vector<VkDescriptorBufferInfo> infos;
      for (uint32_t id : d.bindings) infos.push_back(binding(id));
      HS_ASSIGN_OR_RETURN(VkDescriptorSet set, descriptors_.allocate(*compute, infos));
      pipeline.steps.push_back(GraphPipeline::Step{compute, set, d.push, d.groups, barrier_before_[dispatch_count_]});
      barrier_count_ += barrier_before_[dispatch_count_] ? 1 : 0;
      ++dispatch_count_;
    }
    pipelines_.push_back(std::move(pipeline));
  }
  return Status::ok();
}

// One command buffer for the island: every step in order, with a barrier
// before each that reads or overwrites what an earlier one touched since the
// last barrier (dispatch_barriers.h). Recorded for simultaneous use, so the next run
// can be submitted before the previous finished (the sync plan orders them).
Status VgfSession::record() {
  std::lock_guard lock(pool_->mutex);
  HS_ASSIGN_OR_RETURN(command_buffer_, pool_->pool.allocate());
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
  HS_VK_RETURN_IF_ERROR(vkBeginCommandBuffer(command_buffer_, &begin));
  // Inputs may have been filled by a transfer or a shader of an earlier submit.
  record_memory_barrier(command_buffer_, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  const VkQueryPool stamps = dispatch_stamps_.get();
  if (stamps) {
    // Dispatch i took from stamp i to stamp i + 1.
    vkCmdResetQueryPool(command_buffer_, stamps, 0, static_cast<uint32_t>(dispatch_pieces_.size() + 1));
    vkCmdWriteTimestamp(command_buffer_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, 0);
  }
  uint32_t dispatched = 0;
  for (const GraphPipeline& pipeline : pipelines_) {
    for (const GraphPipeline::Step& step : pipeline.steps) {
      if (step.barrier_before)
        record_memory_barrier(command_buffer_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      record_dispatch(command_buffer_, *step.pipeline, step.set, std::as_bytes(std::span(step.push)), step.groups[0],
                      step.groups[1], step.groups[2]);
      ++dispatched;
      if (stamps) vkCmdWriteTimestamp(command_buffer_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, stamps, dispatched);
    }
  }
  // Outputs are read next by the host (mapped), a transfer or another shader.
  record_memory_barrier(command_buffer_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                        VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                        VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
  HS_VK_RETURN_IF_ERROR(vkEndCommandBuffer(command_buffer_));
  return Status::ok();
}

Result<uint64_t> VgfSession::submit(const GpuStepSync& sync, VkCommandBuffer before, VkCommandBuffer after,
                                    std::span<const VkCommandBuffer> then) {
  GpuSubmit batch;
  const CommandBufferList cmds(before, command_buffer_, after, then);
  batch.command_buffers = cmds.span();
  batch.wait_value = sync.wait_value;
  batch.signal = sync.signal;
  HS_ASSIGN_OR_RETURN(const uint64_t value, context_->submit(batch));
  executed_ = true;
  if (value > 0)
    last_signalled_ = value;
  else
    unsignalled_submit_ = true;
  if (sync.queue_wait_idle_after) HS_RETURN_IF_ERROR(context_->wait_idle());
  return value;
}

Result<std::vector<OpTiming>> VgfSession::op_timings() const {
  if (!dispatch_stamps_ || !executed_) return std::vector<OpTiming>{};
  std::vector<uint64_t> ticks(dispatch_pieces_.size() + 1);
  HS_VK_RETURN_IF_ERROR(vkGetQueryPoolResults(context_->device(), dispatch_stamps_.get(), 0,
                                              static_cast<uint32_t>(ticks.size()), ticks.size() * sizeof(uint64_t),
                                              ticks.data(), sizeof(uint64_t),
                                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  const double ms_per_tick = context_->limits().timestampPeriod * 1e-6;
  std::vector<OpTiming> timings = dispatch_pieces_;
  for (size_t i = 0; i < timings.size(); ++i) {
    timings[i].start_ms = static_cast<double>(ticks[i] - ticks[0]) * ms_per_tick;
    timings[i].ms = static_cast<double>(ticks[i + 1] - ticks[i]) * ms_per_tick;
  }
  return timings;
}

}  // namespace hetsched::vgf
