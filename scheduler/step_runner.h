// Step runners: one per program step and executor lane, bound at load to the
// lane's tensors (host slots, island handles, device buffers), so a run only
// calls them. The executor (scheduler/executor.h) decides when each runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "graph/tensor.h"
#include "scheduler/program.h"
#include "sync/sync_mode.h"

namespace hetsched {

// GPU work a step left in flight: it signals `value` on `context`'s timeline.
struct GpuCompletion {
  SharedGpuContext* context = nullptr;  // null: nothing in flight
  uint64_t value = 0;
  bool timestamped = false;  // the submit carried the call's timestamp writes
};

struct DeviceIoRequest;  // scheduler/device_io.h

// What the steps of one request share. The slots are the lane's own.
struct RequestState {
  SyncMode mode = SyncMode::kTimeline;
  // Host tensors, by program tensor index: the lane's host arena, the
  // request's inputs and outputs, the program's constants.
  std::vector<TensorRef>* slots = nullptr;
  // The caller's GPU buffers, for a request that brought them (null: host
  // memory); read by the device-I/O steps.
  const DeviceIoRequest* device_io = nullptr;
  int run_index = 0;
  int host_waits = 0;
  // How long one host wait on GPU work may take (scheduler.gpu_wait_timeout_ms).
  std::chrono::nanoseconds gpu_wait_timeout = std::chrono::seconds(60);
  // Set by a host step after it waited for the GPU, so its trace event shows
  // its own work, not the wait.
  std::chrono::steady_clock::time_point waited_until{};
};

// How the executor asks a step to run.
struct StepCall {
  // The highest timeline value, on the step's context(), of the GPU work it
  // reads (0: none): kGpu steps wait for it on the device, kHost steps on the host.
  uint64_t wait_value = 0;
  // For steps that write device memory from the host (writes_from_host):
  // the highest value, on context(), of the GPU steps before it in the DAG
  // (Lane::host_write_waits). The memory plan lets such a step reuse bytes
  // those steps touched, so the host must see them finished before it writes.
  uint64_t host_wait_value = 0;
  // Timestamp writes to submit around the step's own commands (may be null).
  VkCommandBuffer before = nullptr;
  VkCommandBuffer after = nullptr;
  // For steps that take followers (StepRunner::takes_followers): command
  // buffers of later steps to submit after the step's own, in its submit.
  std::span<const VkCommandBuffer> then;
  // For a follower (a kHost step whose follower_commands() went in its
  // producer's submit this request): the value that submit signalled; 0
  // otherwise, and prepare() submits them itself.
  uint64_t submitted_with_producer = 0;
};

class StepRunner {
 public:
  enum class Kind : uint8_t {
    kHost,  // runs on the calling thread, with its inputs complete
    kGpu,   // submits to context()'s queue and returns; may do small host work first
  };
  virtual ~StepRunner() = default;
  virtual Kind kind() const = 0;
  // The context a kGpu step submits to, or a readback reads from; null for host-only steps.
  virtual SharedGpuContext* context() const { return nullptr; }
  // The trace track: the island's resource ("cpu", "gpu:<key>") or "handoffs".
  virtual const std::string& track() const = 0;
  virtual const std::string& label() const = 0;
  // True for a kGpu step that writes device memory from the host (a mapped upload).
  virtual bool writes_from_host() const { return false; }
  // A kGpu step that can put later steps' GPU work in its own submit
  // (StepCall::then): device islands.
  virtual bool takes_followers() const { return false; }
  // For a kHost step: the GPU work prepare() would submit, as one command
  // buffer that may instead follow its producer in the producer's submit
  // (null: none; StepCall::submitted_with_producer then says it did).
  virtual VkCommandBuffer follower_commands() const { return nullptr; }
  // Called for a kHost step as soon as every step it depends on has been
  // issued, before the host work of earlier host steps: a staged readback
  // submits its copy to staging here, so the copy runs on the queue right
  // after its producer instead of after the CPU islands the thread runs
  // first. run() then only waits and reads. The executor calls it once per
  // request, before run(), for every kHost step with a context().
  virtual Status prepare(RequestState& state, const StepCall& call) { return Status::ok(); }
  // Runs the step for one request. kGpu steps report what they submitted in `done`.
  virtual Status run(RequestState& state, const StepCall& call, GpuCompletion& done) = 0;
  // Island steps of a session with profile_ops: the timed pieces of the
  // last run, once its GPU work completed (empty for other steps).
  virtual Result<std::vector<OpTiming>> op_timings() { return std::vector<OpTiming>{}; }
};

// A step that moves nothing (a host island's output read by another host island).
std::unique_ptr<StepRunner> make_noop_step(std::string label);

// An alias handoff: the reading island's input is the writing island's
// output, so nothing moves; the step passes the writer's completion on
// `context` to the reader (a kGpu step that submits nothing).
std::unique_ptr<StepRunner> make_alias_step(SharedGpuContext* context, std::string label);

// Runs `island` on `handle`. Host islands read and write the request's slots
// and hold `resource_lock` while they run (one island at a time on a CPU
// pool); device islands submit per the sync mode. `handle` is not owned.
std::unique_ptr<StepRunner> make_island_step(const ProgramIsland& island, IslandHandle& handle, std::string track,
                                             std::mutex* resource_lock);

}  // namespace hetsched
