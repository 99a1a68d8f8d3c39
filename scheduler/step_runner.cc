#include "scheduler/step_runner.h"

#include "sync/step_sync.h"

namespace hetsched {

namespace {

class NoopStep final : public StepRunner {
 public:
  explicit NoopStep(std::string label) : label_(std::move(label)) {}
  Kind kind() const override { return Kind::kHost; }
  const std::string& track() const override { return track_; }
  const std::string& label() const override { return label_; }
  Status run(RequestState&, const StepCall&, GpuCompletion&) override { return Status::ok(); }

 private:
  std::string label_;
  std::string track_ = "handoffs";
};

class AliasStep final : public StepRunner {
 public:
  AliasStep(SharedGpuContext* context, std::string label) : context_(context), label_(std::move(label)) {}
  Kind kind() const override { return Kind::kGpu; }
  SharedGpuContext* context() const override { return context_; }
  const std::string& track() const override { return track_; }
  const std::string& label() const override { return label_; }
  Status run(RequestState&, const StepCall& call, GpuCompletion& done) override {
    done = {context_, call.wait_value, false};
    return Status::ok();
  }

 private:
  SharedGpuContext* context_;
  std::string label_;
  std::string track_ = "handoffs";
};

class IslandStep final : public StepRunner {
 public:
  IslandStep(const ProgramIsland& island, IslandHandle& handle, std::string track, std::mutex* resource_lock)
      : island_(island),
        handle_(handle),
        context_(handle.gpu_context().get()),
        track_(std::move(track)),
        label_("island " + std::to_string(island.id) + " (" + island.delegate + ")"),
        resource_lock_(resource_lock) {}

  Kind kind() const override { return context_ ? Kind::kGpu : Kind::kHost; }
  bool takes_followers() const override { return context_ != nullptr; }
  SharedGpuContext* context() const override { return context_; }
  const std::string& track() const override { return track_; }
  const std::string& label() const override { return label_; }

  Status run(RequestState& state, const StepCall& call, GpuCompletion& done) override {
    ExecContext ctx;
    ctx.run_index = state.run_index;
    host_timings_.clear();
    ctx.op_timings = &host_timings_;
    Status status;
    if (context_) {
      ctx.gpu = plan_gpu_step(state.mode, call.wait_value);
      ctx.gpu_before = call.before;
      ctx.gpu_after = call.after;
      ctx.gpu_then = call.then;
      status = handle_.execute(ctx, {}, {});
      if (status.is_ok()) {
        done = {context_, ctx.signalled_value, call.before != nullptr};
        if (ctx.gpu.queue_wait_idle_after) state.host_waits++;
      }
    } else {
      const std::vector<TensorRef>& slots = *state.slots;
      in_refs_.clear();
      out_refs_.clear();
      for (int t : island_.inputs) in_refs_.push_back(slots[t]);
      for (int t : island_.outputs) out_refs_.push_back(slots[t]);
      std::unique_lock<std::mutex> lock;
      if (resource_lock_) {
        lock = std::unique_lock(*resource_lock_);
        state.waited_until = std::chrono::steady_clock::now();  // the trace shows the island, not the queue for the pool
      }
      status = handle_.execute(ctx, in_refs_, out_refs_);
    }
    return status.with_context(label_ + ": ");
  }

  Result<std::vector<OpTiming>> op_timings() override {
    if (context_) return handle_.op_timings();
    return std::move(host_timings_);
  }

 private:
  const ProgramIsland& island_;
  IslandHandle& handle_;
  SharedGpuContext* context_;
  std::string track_;
  std::string label_;
  std::mutex* resource_lock_;
  std::vector<TensorRef> in_refs_, out_refs_;  // kept to spare the allocation per run
  std::vector<OpTiming> host_timings_;         // a host island's last run (profile_ops); runners are per lane
};

}  // namespace

std::unique_ptr<StepRunner> make_noop_step(std::string label) { return std::make_unique<NoopStep>(std::move(label)); }

std::unique_ptr<StepRunner> make_alias_step(SharedGpuContext* context, std::string label) {
  return std::make_unique<AliasStep>(context, std::move(label));
}

std::unique_ptr<StepRunner> make_island_step(const ProgramIsland& island, IslandHandle& handle, std::string track,
                                             std::mutex* resource_lock) {
  return std::make_unique<IslandStep>(island, handle, std::move(track), resource_lock);
}

}  // namespace hetsched
