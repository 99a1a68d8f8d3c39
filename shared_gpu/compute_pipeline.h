// Compute pipelines from embedded SPIR-V, their descriptor sets, and dispatch
// recording. The shape every GPU delegate kernel uses: set 0 holds N storage
// buffers at bindings 0..N-1, plus optional push constants and 32-bit
// specialisation constants.
//
// Ownership: ComputePipeline and DescriptorPool hold a shared_ptr to their
// SharedGpuContext; pipelines are created through the context's shared
// pipeline cache. Descriptor sets belong to their pool.
//
// Thread-safety: creating pipelines is thread-safe (the pipeline cache is
// internally synchronised). A DescriptorPool is externally synchronised.
#pragma once

#include <volk.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "hetsched/status.h"
#include "shared_gpu/shared_gpu_context.h"
#include "shared_gpu/vk_handle.h"

namespace hetsched {

struct ComputePipelineDesc {
  // For errors: "failed to create compute pipeline 'add_one': ...".
  std::string name;
  // SPIR-V words, e.g. an array from hetsched_embed_spirv. Not retained.
  std::span<const uint32_t> spirv;
  std::string entry_point = "main";
  // Storage buffers at set 0, bindings 0..storage_buffer_count-1.
  uint32_t storage_buffer_count = 0;
  // Bytes of push constants (a multiple of 4; 0 for none).
  uint32_t push_constant_size = 0;
  // Value i becomes specialisation constant_id i (uint, int, float or bool
  // bits). Not retained.
  std::span<const uint32_t> specialization_constants;
  // Non-zero: specialisation constant kHalfBindingsConstantId, the bindings
  // whose tensors are f16 (shared_gpu/shaders/half_io.glsl). Only for the
  // `_half` SPIR-V of a kernel.
  uint32_t half_bindings = 0;
};

// half_io.glsl's kHalfBindings.
inline constexpr uint32_t kHalfBindingsConstantId = 64;

class ComputePipeline {
 public:
  static Result<ComputePipeline> create(SharedGpuContext& context, const ComputePipelineDesc& desc);

  ComputePipeline() = default;
  ComputePipeline(ComputePipeline&&) noexcept = default;
  // Swaps, so the previous pipeline is destroyed before its context is released.
  ComputePipeline& operator=(ComputePipeline&& other) noexcept {
    ComputePipeline incoming(std::move(other));
    std::swap(context_, incoming.context_);
    std::swap(set_layout_, incoming.set_layout_);
    std::swap(layout_, incoming.layout_);
    std::swap(pipeline_, incoming.pipeline_);
    std::swap(storage_buffer_count_, incoming.storage_buffer_count_);
    std::swap(push_constant_size_, incoming.push_constant_size_);
    return *this;
  }

  VkPipeline pipeline() const { return pipeline_.get(); }
  VkPipelineLayout layout() const { return layout_.get(); }
  VkDescriptorSetLayout set_layout() const { return set_layout_.get(); }
  uint32_t storage_buffer_count() const { return storage_buffer_count_; }
  uint32_t push_constant_size() const { return push_constant_size_; }

 private:
  // Declared first: destroyed last.
  std::shared_ptr<SharedGpuContext> context_;
  VkHandle<VkDescriptorSetLayout> set_layout_;
  VkHandle<VkPipelineLayout> layout_;
  VkHandle<VkPipeline> pipeline_;
  uint32_t storage_buffer_count_ = 0;
  uint32_t push_constant_size_ = 0;
};

// A descriptor pool for sets of storage buffers.
class DescriptorPool {
 public:
  // Room for `max_sets` sets of up to `storage_buffers_per_set` buffers each.
  static Result<DescriptorPool> create(SharedGpuContext& context, uint32_t max_sets,
                                       uint32_t storage_buffers_per_set);

  DescriptorPool() = default;
  DescriptorPool(DescriptorPool&&) noexcept = default;
  DescriptorPool& operator=(DescriptorPool&& other) noexcept {
    DescriptorPool incoming(std::move(other));
    std::swap(context_, incoming.context_);
    std::swap(pool_, incoming.pool_);
    return *this;
  }

  VkDescriptorPool handle() const { return pool_.get(); }

  // Allocates a set for `pipeline` and points binding i at `buffers[i]`.
  // kInvalidArgument unless buffers.size() == pipeline.storage_buffer_count();
  // kUnavailable (VK_ERROR_OUT_OF_POOL_MEMORY) when the pool is full.
  Result<VkDescriptorSet> allocate(const ComputePipeline& pipeline, std::span<const VkDescriptorBufferInfo> buffers);
  // Returns every set to the pool. None may be in use by pending GPU work.
  Status reset();

 private:
  std::shared_ptr<SharedGpuContext> context_;
  VkHandle<VkDescriptorPool> pool_;
};

// Binds `pipeline` and `set`, pushes `push_constants` (pipeline's size, or
// empty) and dispatches `groups_x * groups_y * groups_z` workgroups.
void record_dispatch(VkCommandBuffer cmd, const ComputePipeline& pipeline, VkDescriptorSet set,
                     std::span<const std::byte> push_constants, uint32_t groups_x, uint32_t groups_y = 1,
                     uint32_t groups_z = 1);

// Workgroups needed to cover `items` with groups of `group_size`.
inline uint32_t group_count(uint64_t items, uint32_t group_size) {
  return static_cast<uint32_t>((items + group_size - 1) / group_size);
}

}  // namespace hetsched
