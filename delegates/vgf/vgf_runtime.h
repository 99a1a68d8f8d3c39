// The VGF runtime: emulates a data-graph pipeline on the shared Vulkan
// device.
//
//   VgfSession::create (once per island, at init):
//     1. plans the dispatches of every segment (dispatch_plan.h); each graph
//        segment becomes a GraphPipeline: the list of TOSA-operator compute
//        pipelines it runs, in order (convolutions on the kernels shared
//        with the Vulkan delegate, shared_gpu/conv_kernel.h, with what
//        follows them folded in);
//     2. plans the transient tensors (intermediates, alias groups merged)
//        into one scratch block by lifetime (transient_planner.h);
//     3. uploads the constants the dispatches read, and the plan's derived
//        buffers (arranged conv weights, folded biases, tap tables), once;
//     4. places the scratch block and the island's inputs and outputs (the
//        DeviceTensors the executor's handoffs fill and drain) in a device
//        arena: the session's, at the offsets init() was given, or one of
//        its own;
//     5. records ONE command buffer for the whole island.
//   VgfSession::submit (per run): one queue submit, no host wait.
//
// Ownership: a session holds shared_ptrs to its SharedGpuContext and to the
// delegate's command pool, so both outlive it. The destructor waits for the
// session's last submit before freeing anything.
//
// Thread-safety: submit() may be called from one thread at a time per
// session; sessions of one delegate may submit concurrently (the context
// locks its queue). The command pool is shared by a delegate's sessions and
// guarded by its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "delegates/delegate.h"
#include "delegates/vgf/dispatch_plan.h"
#include "delegates/vgf/vgf_format.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/compute_pipeline.h"
#include "shared_gpu/vk_handle.h"

namespace hetsched::vgf {

// A delegate instance's one command pool (pools are never shared between
// delegates), shared by its sessions.
struct DelegatePool {
  std::mutex mutex;
  CommandPool pool;
};

// One graph segment as a pipeline: its compute pipelines and their
// descriptor sets, recorded in order. Compute segments are a one-step
// pipeline of their own shader.
struct GraphPipeline {
  struct Step {
    const ComputePipeline* pipeline = nullptr;  // owned by the session
    VkDescriptorSet set = VK_NULL_HANDLE;       // owned by the session's descriptor pool
    std::vector<uint32_t> push;
    std::array<uint32_t, 3> groups{1, 1, 1};
    // Waits for the dispatches before it (dispatch_barriers.h).
    bool barrier_before = false;
  };
  std::string name;
  std::vector<Step> steps;
};

class VgfSession {
 public:
  // `file` must come from decode_vgf or lower_island (checked). Errors name
  // the Vulkan call or the operator that failed.
  // `profile_ops`: write a timestamp after every dispatch (op_timings()).
  // `coopmat`: convs on the tensor cores (precision fp16, resolve_precision).
  // `half_storage`: the intermediates half_storage.h picks are f16 (storage
  // fp16, resolve_storage; needs storageBuffer16BitAccess); file() is then
  // the retyped file.
  static Result<std::unique_ptr<VgfSession>> create(std::shared_ptr<SharedGpuContext> context,
                                                    std::shared_ptr<DelegatePool> pool, VgfFile file, int island_id,
                                                    const DevicePlacement* placement = nullptr,
                                                    bool profile_ops = false,
                                                    std::optional<gpu::CoopMatConv> coopmat = std::nullopt,
                                                    bool half_storage = false);
  ~VgfSession();
  VgfSession(const VgfSession&) = delete;
  VgfSession& operator=(const VgfSession&) = delete;

  const VgfFile& file() const { return file_; }
  SharedGpuContext& context() const { return *context_; }
  const std::shared_ptr<SharedGpuContext>& shared_context() const { return context_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  // Island input/output i: a range of the arena, NHWC for rank 4.
  const DeviceTensor& input(size_t i) const { return inputs_.at(i); }
  const DeviceTensor& output(size_t i) const { return outputs_.at(i); }
  const std::vector<GraphPipeline>& pipelines() const { return pipelines_; }
  // Bytes of the transients' scratch block, and the most bytes live at once.
  uint64_t transient_bytes() const { return transient_bytes_; }
  uint64_t transient_lower_bound() const { return transient_lower_bound_; }

  // Submits the recorded command buffer per `sync` (wait on the timeline,
  // signal, idle the queue after), between `before` and `after` when they
  // are not null (the executor's timestamp writes) and followed by `then`
  // (ExecContext::gpu_then). Returns the signalled timeline value (0
  // without a signal). Does not wait on the host.
  Result<uint64_t> submit(const GpuStepSync& sync, VkCommandBuffer before = VK_NULL_HANDLE,
                          VkCommandBuffer after = VK_NULL_HANDLE, std::span<const VkCommandBuffer> then = {});

  // The GPU time of each dispatch of the last run, once it has completed
  // (waits for it): kind "dispatch", the graph nodes it ran. Empty unless
  // made with profile_ops on a queue that writes timestamps, or before the
  // first submit.
  Result<std::vector<OpTiming>> op_timings() const;
  size_t dispatch_count() const { return dispatch_count_; }
  // Barriers recorded between its dispatches (the leading and trailing ones
  // every island records left out).
  size_t barrier_count() const { return barrier_count_; }

 private:
  VgfSession(std::shared_ptr<SharedGpuContext> context, std::shared_ptr<DelegatePool> pool, VgfFile file, int island_id);
  Status build(const DevicePlacement* placement, bool profile_ops);
  Status allocate_memory(const DevicePlacement* placement, const DispatchPlan& plan);
  Status make_pipelines(const DispatchPlan& plan);
  Status record();
  VkDescriptorBufferInfo binding(uint32_t resource) const;

  // Declared first: destroyed last, after everything made on them.
  std::shared_ptr<SharedGpuContext> context_;
  std::shared_ptr<DelegatePool> pool_;
  VgfFile file_;
  std::optional<gpu::CoopMatConv> coopmat_;
  int island_id_;

  // Where each resource lives: buffer, byte offset and bytes; the plan's
  // derived buffers follow the file's resources.
  struct Placement {
    const Buffer* buffer = nullptr;
    uint64_t offset = 0;
    uint64_t bytes = 0;
  };
  std::vector<Placement> placements_;
  Buffer own_arena_;  // inputs, outputs and transients when no placement was given
  Buffer constants_;  // the constants read, then the derived constant buffers
  Buffer scratch_;    // the derived scratch buffers (split-K partial sums)
  std::vector<DeviceTensor> inputs_;
  std::vector<DeviceTensor> outputs_;
  uint64_t transient_bytes_ = 0;
  uint64_t transient_lower_bound_ = 0;

  // By kernel, f16 bindings and specialisation, made on first use.
  std::map<std::tuple<Kernel, uint32_t, std::vector<uint32_t>>, std::unique_ptr<ComputePipeline>> builtin_;
  std::map<uint32_t, std::unique_ptr<ComputePipeline>> custom_;  // by compute module
  DescriptorPool descriptors_;
  std::vector<GraphPipeline> pipelines_;  // its sets and pipelines are owned above
  std::vector<bool> barrier_before_;      // per dispatch in plan order
  size_t dispatch_count_ = 0;
  size_t barrier_count_ = 0;

  VkHandle<VkQueryPool> dispatch_stamps_;  // profile_ops: one stamp before and after every dispatch
  std::vector<OpTiming> dispatch_pieces_;   // profile_ops: per dispatch, without times

  VkCommandBuffer command_buffer_ = VK_NULL_HANDLE;
  uint64_t last_signalled_ = 0;
  bool executed_ = false;
  bool unsignalled_submit_ = false;
};

}  // namespace hetsched::vgf
