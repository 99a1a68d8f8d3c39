// Session: a Program made ready to run — delegates initialised, tensors
// allocated — and the executor that runs its steps.
//
// Thread-safety: run() is not re-entrant; use one Session per concurrent
// caller (the concurrent scheduler will lift this).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "profile/profile.h"
#include "scheduler/delegate_set.h"
#include "scheduler/handoff.h"
#include "scheduler/program.h"

namespace hetsched {

struct StepTiming {
  std::string label;     // "island 0 (cpu)", "upload 'x' host → vgf#0"
  std::string resource;  // the track it ran on: "cpu", "gpu:token:group", "host"
  double start_ms = 0;   // since the run began (host time of the call)
  double ms = 0;         // host time of the call; GPU steps return before the GPU finishes
};

struct RunStats {
  double total_ms = 0;
  std::vector<StepTiming> steps;
  int host_waits = 0;  // times the host blocked on a device
};

class Session {
 public:
  // Initialises every island of `program` on the delegates `profile` enables.
  // An island whose delegate the profile does not enable is an error.
  static Result<std::unique_ptr<Session>> create(Program program, const Profile& profile);
  ~Session();

  const Program& program() const { return program_; }
  // Types of the model inputs/outputs, in order.
  std::vector<TensorType> input_types() const;
  std::vector<TensorType> output_types() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // Runs the program once. `inputs` must match input_types() exactly.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, RunStats* stats = nullptr);
  // Writes `stats` as Chrome trace JSON (viewable in Perfetto), one track per resource.
  static Status write_trace(const RunStats& stats, const std::string& path);

 private:
  Session(Program program, DelegateSet delegates, SyncMode sync);
  Status init_islands(const Profile& profile);
  Status prepare_steps();
  Status check_sync_mode() const;
  // The executor's GPU resources on `context`, made on first use.
  Result<ExecutorGpu*> gpu_for(const std::shared_ptr<SharedGpuContext>& context);
  Status run_island(int island, RunState& state, RunStats* stats);

  Program program_;
  SyncMode sync_;
  // Destruction order matters: handoff steps and the executor's GPU
  // resources use island buffers and contexts, so they go before the
  // handles, which go before the delegates.
  DelegateSet delegates_;
  std::vector<std::unique_ptr<IslandHandle>> handles_;  // by island index
  std::vector<std::unique_ptr<ExecutorGpu>> gpus_;
  std::vector<std::unique_ptr<HandoffStep>> handoffs_;  // by program step index; null for island steps
  std::vector<Tensor> slots_;                           // host storage, by program tensor index
  int run_count_ = 0;
  std::chrono::steady_clock::time_point run_start_;
};

}  // namespace hetsched
