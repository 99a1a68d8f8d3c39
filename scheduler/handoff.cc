#include "scheduler/handoff.h"

#include <cstring>

#include "scheduler/layout.h"
#include "scheduler/host_copy.h"
#include "shared_gpu/host_access.h"
#include "sync/step_sync.h"

namespace hetsched {

namespace {

bool needs_permute(const TensorType& type, TensorLayout a, TensorLayout b) { return a != b && layout_applies(type); }

std::string layout_note(const TensorType& type, TensorLayout from, TensorLayout to) {
  if (!needs_permute(type, from, to)) return "";
  return std::string(" + ") + std::string(tensor_layout_name(from)) + "→" + std::string(tensor_layout_name(to));
}

BufferRange range_of(const DeviceTensor& t) { return {t.buffer, t.offset, t.size}; }

const std::string kHandoffTrack = "handoffs";

}  // namespace

Result<std::optional<Permute4d>> gpu_layout_permute(const TensorType& type, TensorLayout from, TensorLayout to) {
  if (!needs_permute(type, from, to)) return std::optional<Permute4d>();
  const size_t bytes = dtype_size(type.dtype);
  if (bytes != 4 && !(bytes == 2 && type.num_elements() % 2 == 0))
    return unsupported("layout conversion on the GPU handles 32-bit elements and even counts of 16-bit ones, not " +
                       type.to_string());
  return std::optional<Permute4d>(Permute4d{static_cast<uint32_t>(type.shape[0]), static_cast<uint32_t>(type.shape[1]),
                                            static_cast<uint32_t>(type.shape[2]), static_cast<uint32_t>(type.shape[3]),
                                            to == TensorLayout::kNhwc, static_cast<uint32_t>(bytes)});
}

namespace {

// A host-visible buffer the size of an island's tensor and a recorded GPU
// copy between the two: staging → tensor for uploads, tensor → staging
// (host-cached) for readbacks.
struct Staging {
  Buffer buffer;
  VkCommandBuffer copy = VK_NULL_HANDLE;  // freed with the transfers
  bool permutes = false;                  // `copy` converts the layout: the host copies bytes as they are

  // What a step's label adds for it.
  std::string note() const { return !copy ? "" : permutes ? " (staged, permuted on the GPU)" : " (staged)"; }
};

// The layout conversion an upload or readback of `type` has the GPU make:
// where the layouts differ and layout_permute.comp moves the elements
// (32-bit, or an even count of 16-bit). Else none, and the host permutes
// (1- and 8-byte elements). On a discrete GPU the host's permute wrote the
// device's write-combined memory element by element: 2-byte elements cost
// PP-OCR det's f16 input 1x3x640x640 several ms on an H200.
std::optional<Permute4d> transfer_permute(const TensorType& type, TensorLayout from, TensorLayout to) {
  Result<std::optional<Permute4d>> permute = gpu_layout_permute(type, from, to);
  return permute.is_ok() ? *permute : std::nullopt;
}

// Staging for a handoff of `type` that host_access.h says to stage (by
// memory kind and size), or whose layout the GPU converts (the host copies
// the graph's NCHW bytes as they are, and the recorded copy is the
// permute); an empty Staging (no copy) where the host reaches the tensor
// mapped and copies it as it is, or permutes it itself.
Result<Staging> staging_for(const TensorType& type, const DeviceEnd& end, bool upload) {
  const std::optional<Permute4d> permute = upload ? transfer_permute(type, TensorLayout::kNchw, end.tensor->layout)
                                                  : transfer_permute(type, end.tensor->layout, TensorLayout::kNchw);
  Staging staging;
  staging.permutes = permute.has_value();
  const HostAccessPolicy policy = host_access_policy(end.transfers->context(), *end.tensor->buffer);
  const HostAccess access = upload ? choose_upload(policy, end.tensor->size) : choose_readback(policy, end.tensor->size);
  if (access == HostAccess::kMapped && !permute) return staging;
  const VkBufferUsageFlags usage = (upload ? VK_BUFFER_USAGE_TRANSFER_SRC_BIT : VK_BUFFER_USAGE_TRANSFER_DST_BIT) |
                                   (permute ? VK_BUFFER_USAGE_STORAGE_BUFFER_BIT : 0);
  HS_ASSIGN_OR_RETURN(staging.buffer, Buffer::create(end.transfers->context(), std::max<uint64_t>(end.tensor->size, 4),
                                                     usage, upload ? MemoryUsage::kUpload : MemoryUsage::kReadback));
  const BufferRange staged{&staging.buffer, 0, end.tensor->size};
  const Permute4d* p = permute ? &*permute : nullptr;
  HS_ASSIGN_OR_RETURN(staging.copy, upload ? end.transfers->record_copy(staged, range_of(*end.tensor), p)
                                           : end.transfers->record_copy(range_of(*end.tensor), staged, p));
  return staging;
}

class UploadStep final : public StepRunner {
 public:
  static Result<std::unique_ptr<StepRunner>> create(int tensor, const TensorType& type, DeviceEnd to,
                                                    std::string label) {
    auto step = std::unique_ptr<UploadStep>(new UploadStep(tensor, type, to, std::move(label)));
    HS_ASSIGN_OR_RETURN(step->staging_, staging_for(type, to, true));
    step->label_ += step->staging_.note();
    return std::unique_ptr<StepRunner>(std::move(step));
  }

  Kind kind() const override { return Kind::kGpu; }
  SharedGpuContext* context() const override { return &to_.transfers->context(); }
  const std::string& track() const override { return kHandoffTrack; }
  const std::string& label() const override { return label_; }

  bool writes_from_host() const override { return !staging_.copy; }

  Status run(RequestState& state, const StepCall& call, GpuCompletion& done) override {
    const std::byte* src = (*state.slots)[tensor_].host;
    if (!staging_.copy && call.host_wait_value) {
      // The arena may give these bytes to GPU work that ran before: let it finish.
      HS_RETURN_IF_ERROR(to_.transfers->context().wait(call.host_wait_value, state.gpu_wait_timeout));
      state.host_waits++;
    }
    std::byte* dst = staging_.copy ? staging_.buffer.mapped() : to_.tensor->buffer->mapped() + to_.tensor->offset;
    if (!staging_.permutes && needs_permute(type_, TensorLayout::kNchw, to_.tensor->layout))
      permute_layout(src, dst, type_.shape, dtype_size(type_.dtype), true);
    else
      host_copy(dst, src, type_.byte_size());
    if (!staging_.copy) return Status::ok();  // host writes to coherent memory are visible to later submits
    const GpuStepSync sync = plan_gpu_step(state.mode, call.wait_value);
    HS_ASSIGN_OR_RETURN(const uint64_t value, to_.transfers->submit(staging_.copy, sync, call.before, call.after));
    done = {&to_.transfers->context(), value, call.before != nullptr};
    if (sync.queue_wait_idle_after) state.host_waits++;
    // Without device-side waits (sync none) the island would not wait for
    // the copy: finish it here.
    if (state.mode == SyncMode::kNone && value) {
      HS_RETURN_IF_ERROR(to_.transfers->context().wait(value, state.gpu_wait_timeout));
      state.host_waits++;
    }
    return Status::ok();
  }

 private:
  UploadStep(int tensor, TensorType type, DeviceEnd to, std::string label)
      : tensor_(tensor), type_(std::move(type)), to_(to) {
    label_ = std::move(label) + layout_note(type_, TensorLayout::kNchw, to_.tensor->layout);
  }

  int tensor_;
  TensorType type_;
  DeviceEnd to_;
  std::string label_;
  Staging staging_;  // only for unmapped destinations and GPU permutes
};

class ReadbackStep final : public StepRunner {
 public:
  static Result<std::unique_ptr<StepRunner>> create(int tensor, const TensorType& type, DeviceEnd from,
                                                    std::string label) {
    auto step = std::unique_ptr<ReadbackStep>(new ReadbackStep(tensor, type, from, std::move(label)));
    step->may_poll_ = from.transfers->context().properties().deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    // The CPU reads uncached device memory very slowly (~30 MB/s from an
    // H100's BAR): beyond the measured crossover, copy to host-cached staging first.
    HS_ASSIGN_OR_RETURN(step->staging_, staging_for(type, from, false));
    step->label_ += step->staging_.note();
    return std::unique_ptr<StepRunner>(std::move(step));
  }

  Kind kind() const override { return Kind::kHost; }
  SharedGpuContext* context() const override { return &from_.transfers->context(); }
  const std::string& track() const override { return kHandoffTrack; }
  const std::string& label() const override { return label_; }

  VkCommandBuffer follower_commands() const override { return staging_.copy; }

  Status prepare(RequestState& state, const StepCall& call) override {
    ready_at_ = std::chrono::steady_clock::now();
    if (!staging_.copy) return Status::ok();
    if (call.submitted_with_producer) {  // the copy went in the producing island's submit
      copied_value_ = call.submitted_with_producer;
      return Status::ok();
    }
    // One submit after the producer, one host wait (in run) for both.
    const GpuStepSync sync = plan_gpu_step(state.mode == SyncMode::kQueueWaitIdle ? state.mode : SyncMode::kTimeline,
                                           call.wait_value);
    HS_ASSIGN_OR_RETURN(copied_value_, from_.transfers->submit(staging_.copy, sync));
    return Status::ok();
  }

  Status run(RequestState& state, const StepCall& call, GpuCompletion&) override {
    SharedGpuContext& context = from_.transfers->context();
    const uint64_t wait = staging_.copy ? copied_value_ : call.wait_value;
    if (wait) HS_RETURN_IF_ERROR(wait_for_gpu(context, wait, state.gpu_wait_timeout));
    state.host_waits++;
    state.waited_until = std::chrono::steady_clock::now();
    const std::byte* src = staging_.copy ? staging_.buffer.mapped() : from_.tensor->buffer->mapped() + from_.tensor->offset;
    std::byte* dst = (*state.slots)[tensor_].host;
    if (!staging_.permutes && needs_permute(type_, from_.tensor->layout, TensorLayout::kNchw))
      permute_layout(src, dst, type_.shape, dtype_size(type_.dtype), false);
    else
      host_copy(dst, src, type_.byte_size());
    return Status::ok();
  }

 private:
  ReadbackStep(int tensor, TensorType type, DeviceEnd from, std::string label)
      : tensor_(tensor), type_(std::move(type)), from_(from) {
    label_ = std::move(label) + layout_note(type_, from_.tensor->layout, TensorLayout::kNchw);
  }

  int tensor_;
  TensorType type_;
  DeviceEnd from_;
  std::string label_;
  // Waits for `value`, sleeping in the driver until shortly before the GPU
  // finished on the last request (from ready to done), then polling: on a
  // GPU-only model the wake-up after the last island is most of the gap
  // between the GPU's time and the latency. CPU devices (lavapipe) never
  // poll: their "GPU" needs every core.
  Status wait_for_gpu(const SharedGpuContext& context, uint64_t value, std::chrono::nanoseconds timeout) {
    using namespace std::chrono;
    constexpr auto kMargin = microseconds(100), kMaxSpin = microseconds(300);
    const auto arrived = steady_clock::now();
    if (may_poll_ && expected_ > steady_clock::duration::zero()) {
      HS_RETURN_IF_ERROR(context.wait_spinning_from(value, ready_at_ + expected_ - kMargin, kMaxSpin, timeout));
    } else {
      HS_RETURN_IF_ERROR(context.wait(value, timeout));
    }
    const auto done = steady_clock::now();
    // Learn only from waits that waited: otherwise the GPU finished earlier
    // than we looked, by an unknown time.
    if (done - arrived > microseconds(5)) expected_ = done - ready_at_;
    return Status::ok();
  }

  Staging staging_;  // only for sources the host reads slowly and GPU permutes
  std::chrono::steady_clock::time_point ready_at_{};
  std::chrono::steady_clock::duration expected_{};  // ready to GPU done, last time this lane waited
  bool may_poll_ = false;  // not on CPU devices
  // This lane's request in progress (a lane runs one at a time): prepare()
  // set the value its copy to staging signals.
  uint64_t copied_value_ = 0;
};

class DeviceCopyStep final : public StepRunner {
 public:
  static Result<std::unique_ptr<StepRunner>> create(const TensorType& type, DeviceEnd from, DeviceEnd to,
                                                    std::string label) {
    auto step = std::unique_ptr<DeviceCopyStep>(new DeviceCopyStep(to.transfers));
    step->label_ = label + " (device copy" + layout_note(type, from.tensor->layout, to.tensor->layout) + ")";
    Result<std::optional<Permute4d>> permute = gpu_layout_permute(type, from.tensor->layout, to.tensor->layout);
    if (!permute.is_ok()) return permute.status().with_context("failed to plan device copy of " + type.to_string() + ": ");
    HS_ASSIGN_OR_RETURN(step->copy_, to.transfers->record_copy(range_of(*from.tensor), range_of(*to.tensor),
                                                               *permute ? &**permute : nullptr));
    return std::unique_ptr<StepRunner>(std::move(step));
  }

  Kind kind() const override { return Kind::kGpu; }
  SharedGpuContext* context() const override { return &transfers_->context(); }
  const std::string& track() const override { return kHandoffTrack; }
  const std::string& label() const override { return label_; }

  Status run(RequestState& state, const StepCall& call, GpuCompletion& done) override {
    const GpuStepSync sync = plan_gpu_step(state.mode, call.wait_value);
    HS_ASSIGN_OR_RETURN(const uint64_t value, transfers_->submit(copy_, sync, call.before, call.after));
    done = {&transfers_->context(), value, call.before != nullptr};
    if (sync.queue_wait_idle_after) state.host_waits++;
    return Status::ok();
  }

 private:
  explicit DeviceCopyStep(GpuTransfers* transfers) : transfers_(transfers) {}
  GpuTransfers* transfers_;
  std::string label_;
  VkCommandBuffer copy_ = VK_NULL_HANDLE;
};

// Islands on different contexts share no memory: a readback, then an upload.
class HostRoundTripStep final : public StepRunner {
 public:
  HostRoundTripStep(std::unique_ptr<StepRunner> readback, std::unique_ptr<StepRunner> upload, std::string label)
      : readback_(std::move(readback)), upload_(std::move(upload)),
        label_(std::move(label) + " (through the host: different GPU contexts)") {}
  Kind kind() const override { return Kind::kHost; }
  SharedGpuContext* context() const override { return readback_->context(); }
  const std::string& track() const override { return kHandoffTrack; }
  const std::string& label() const override { return label_; }
  // The readback's GPU side (a staged copy, or the layout permute) is
  // submitted here, as for a readback of its own: run() only waits for it.
  Status prepare(RequestState& state, const StepCall& call) override { return readback_->prepare(state, call); }
  Status run(RequestState& state, const StepCall& call, GpuCompletion& done) override {
    HS_RETURN_IF_ERROR(readback_->run(state, call, done));
    return upload_->run(state, StepCall{}, done);
  }

 private:
  std::unique_ptr<StepRunner> readback_;
  std::unique_ptr<StepRunner> upload_;
  std::string label_;
};

}  // namespace

Result<std::unique_ptr<StepRunner>> make_upload(int tensor, const TensorType& type, DeviceEnd to, std::string label) {
  return UploadStep::create(tensor, type, to, std::move(label));
}

Result<std::unique_ptr<StepRunner>> make_readback(int tensor, const TensorType& type, DeviceEnd from,
                                                  std::string label) {
  return ReadbackStep::create(tensor, type, from, std::move(label));
}

Result<std::unique_ptr<StepRunner>> make_device_copy(int tensor, const TensorType& type, DeviceEnd from, DeviceEnd to,
                                                     std::string label) {
  if (&from.transfers->context() != &to.transfers->context()) {
    HS_ASSIGN_OR_RETURN(auto readback, make_readback(tensor, type, from, label));
    HS_ASSIGN_OR_RETURN(auto upload, make_upload(tensor, type, to, label));
    return std::unique_ptr<StepRunner>(new HostRoundTripStep(std::move(readback), std::move(upload), std::move(label)));
  }
  return DeviceCopyStep::create(type, from, to, std::move(label));
}

}  // namespace hetsched
