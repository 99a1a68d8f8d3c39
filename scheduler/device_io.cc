#include "scheduler/device_io.h"

#include <algorithm>
#include <optional>

#include "scheduler/layout.h"
#include "sync/step_sync.h"

namespace hetsched {

namespace {

const std::string kTrack = "handoffs";

// One copy between a caller's buffer and an island's tensor, recorded anew
// for each request into the same command buffer (the lane waited for its
// previous request, so the buffer is not pending). Where the island keeps
// the tensor NHWC (VGF) the copy permutes it from or to the caller's NCHW.
class CallerBufferCopy final : public StepRunner {
 public:
  CallerBufferCopy(int tensor, DeviceEnd end, bool into_island, std::optional<Permute4d> permute, std::string label)
      : tensor_(tensor), end_(end), into_island_(into_island), permute_(permute), label_(std::move(label)) {}

  Kind kind() const override { return Kind::kGpu; }
  SharedGpuContext* context() const override { return &end_.transfers->context(); }
  const std::string& track() const override { return kTrack; }
  const std::string& label() const override { return label_; }

  Status run(RequestState& state, const StepCall& call, GpuCompletion& done) override {
    if (!state.device_io)
      return internal_error("failed to run " + label_ + ": the request brought no GPU buffers");
    const DeviceBufferRange& caller = state.device_io->by_tensor[tensor_];
    const BufferRange theirs{nullptr, caller.offset, caller.size, caller.buffer};
    const BufferRange ours{end_.tensor->buffer, end_.tensor->offset, end_.tensor->size};
    const BufferRange src = into_island_ ? theirs : ours, dst = into_island_ ? ours : theirs;
    const Permute4d* permute = permute_ ? &*permute_ : nullptr;
    if (cmd_) {
      HS_RETURN_IF_ERROR(end_.transfers->rerecord_copy(cmd_, src, dst, permute));
    } else {
      HS_ASSIGN_OR_RETURN(cmd_, end_.transfers->record_copy(src, dst, permute));
    }
    const uint64_t wait = into_island_ ? std::max(call.wait_value, state.device_io->inputs_ready) : call.wait_value;
    const GpuStepSync sync = plan_gpu_step(state.mode, wait);
    HS_ASSIGN_OR_RETURN(const uint64_t value, end_.transfers->submit(cmd_, sync, call.before, call.after));
    done = {&end_.transfers->context(), value, call.before != nullptr};
    if (sync.queue_wait_idle_after) state.host_waits++;
    return Status::ok();
  }

 private:
  int tensor_;
  DeviceEnd end_;
  bool into_island_;
  std::optional<Permute4d> permute_;
  std::string label_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;  // freed with the transfers
};

// The permute between the caller's NCHW and the island's layout, if they
// differ (the caller's buffer is always NCHW).
Result<std::optional<Permute4d>> permute_for(const TensorType& type, const DeviceEnd& end, bool into_island,
                                             const std::string& label) {
  const TensorLayout caller = TensorLayout::kNchw, island = end.tensor->layout;
  Result<std::optional<Permute4d>> permute =
      into_island ? gpu_layout_permute(type, caller, island) : gpu_layout_permute(type, island, caller);
  if (!permute.is_ok())
    return permute.status().with_context(label + ": the island keeps " + type.to_string() + " in " +
                                         std::string(tensor_layout_name(island)) + ", and ");
  return permute;
}

}  // namespace

Result<std::unique_ptr<StepRunner>> make_device_input(int tensor, const TensorType& type, DeviceEnd to,
                                                      std::string label) {
  HS_ASSIGN_OR_RETURN(const std::optional<Permute4d> permute, permute_for(type, to, true, label));
  return std::unique_ptr<StepRunner>(new CallerBufferCopy(tensor, to, true, permute, std::move(label)));
}

Result<std::unique_ptr<StepRunner>> make_device_output(int tensor, const TensorType& type, DeviceEnd from,
                                                       std::string label) {
  HS_ASSIGN_OR_RETURN(const std::optional<Permute4d> permute, permute_for(type, from, false, label));
  return std::unique_ptr<StepRunner>(new CallerBufferCopy(tensor, from, false, permute, std::move(label)));
}

}  // namespace hetsched
