// Session: a Program made ready to run — delegates initialised, lanes of
// tensors allocated — and the entry points that run requests on it.
//
// Thread-safety: run() and submit() are thread-safe. A session has
// `scheduler.max_in_flight` lanes (sets of host tensors and device islands);
// up to that many requests run at once, each on its own lane, and further
// callers wait for a lane. Host islands are shared by all lanes and run one
// at a time per resource (the CPU pool); device islands have one instance
// per lane, so request k+1's CPU island runs while request k's GPU island
// runs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "delegates/delegate.h"
#include "profile/profile.h"
#include "scheduler/delegate_set.h"
#include "scheduler/device_io.h"
#include "scheduler/executor.h"
#include "scheduler/program.h"
#include "scheduler/step_graph.h"
#include "scheduler/trace.h"

namespace hetsched {

// A request on the caller's GPU buffers (scheduler/device_io.h), for
// Session::run_device.
struct DeviceRunRequest {
  std::vector<DeviceBufferRange> inputs, outputs;  // in input_types() / output_types() order
  // The input copies wait on the device for `wait` (a caller's timeline
  // semaphore; null: none) and for `timeline_wait` on the context's own
  // timeline (0: none).
  ForeignTimelinePoint wait;
  uint64_t timeline_wait = 0;
  // Signalled on the device once the outputs are written (null: none).
  ForeignTimelinePoint signal;
};

// What submit() delivers.
struct RunResult {
  std::vector<Tensor> outputs;
  RunStats stats;
};

class Session {
 public:
  // Initialises every island of `program` on the delegates `profile` enables
  // (device islands once per lane). An island whose delegate the profile does
  // not enable is an error.
  static Result<std::unique_ptr<Session>> create(Program program, const Profile& profile);
  // Waits for submitted requests to finish.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // The program run, without its island blobs: they are released once the
  // islands are initialised (keep a copy of the Program to save it).
  const Program& program() const { return program_; }
  // Per device island, in program order: its id and what its recorded
  // command buffer holds (IslandHandle::command_stream; lane 0's, every
  // lane records the same).
  std::vector<std::pair<int, CommandStreamCounts>> command_streams() const;
  const StepGraph& step_graph() const { return graph_; }
  int max_in_flight() const { return static_cast<int>(lanes_.size()); }
  // Types of the model inputs/outputs, in order.
  std::vector<TensorType> input_types() const;
  std::vector<TensorType> output_types() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // Runs one request and waits for it. `inputs` must match input_types()
  // exactly. With `stats`, fills it (events with GPU timestamps). Thread-safe.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, RunStats* stats = nullptr);
  // run() into the caller's `outputs`, which must match output_types()
  // exactly and are written in place: a caller that keeps them across runs
  // allocates nothing per request (fresh multi-MiB outputs cost a page fault
  // per 4 KiB on every run). Thread-safe; a run's outputs belong to it alone.
  Status run_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, RunStats* stats = nullptr);
  // Queues one request and returns at once; a pool of max_in_flight threads
  // runs queued requests in order of submission. `with_stats` records events.
  std::future<Result<RunResult>> submit(std::vector<Tensor> inputs, bool with_stats = false);
  // submit() into the caller's `outputs` (as run_into): they must outlive the
  // future and be left alone until it is ready. The future holds the stats.
  std::future<Result<RunStats>> submit_into(std::vector<Tensor> inputs, std::vector<Tensor>& outputs,
                                            bool with_stats = false);
  // One request whose inputs and outputs are the caller's GPU buffers, on
  // device_io_context()'s device: device copies in and out, nothing through
  // host memory. Returns once the outputs are written, with the value on the
  // context's timeline signalled then. kFailedPrecondition with
  // device_io_refusal() for models it cannot run this way; kInvalidArgument
  // naming the tensor for a null buffer or a wrong size. Thread-safe.
  Result<uint64_t> run_device(const DeviceRunRequest& request, RunStats* stats = nullptr);
  // Why run_device refuses this model ("" when it runs it): an input or
  // output that a host island reads or writes, islands on two contexts, a
  // layout the copies cannot keep, a sync mode other than timeline.
  const std::string& device_io_refusal() const { return device_io_refusal_; }
  // The context whose device the caller's buffers must be on (null when refused).
  SharedGpuContext* device_io_context() const { return device_io_context_; }

 private:
  Session(Program program, DelegateSet delegates, const Profile& profile);
  Status init_shared_islands(const Profile& profile);
  Status check_sync_mode() const;
  Status calibrate_clocks();
  // Queues `job` for the lane workers (started on first use).
  void enqueue(std::function<void()> job);
  void plan_outputs();
  Result<std::unique_ptr<Lane>> make_lane(const Profile& profile);
  Status bind_steps(Lane& lane);
  // Sets device_io_refusal_ / device_io_context_ (session_device_io.cc).
  void check_device_io();
  Lane* acquire_lane();
  void release_lane(Lane* lane);
  void worker_loop();

  Program program_;
  SyncMode sync_;
  std::string trace_path_;  // logging.trace: rewritten after every request
  std::chrono::nanoseconds gpu_wait_timeout_;  // scheduler.gpu_wait_timeout_ms
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
  StepGraph graph_;
  std::vector<bool> device_island_;  // by island
  std::vector<bool> output_fills_slot_;  // by model output: written in place (plan_outputs)
  // Destruction order: lanes (their handles and buffers) go before the
  // shared host handles, which go before the delegates.
  DelegateSet delegates_;
  std::map<std::string, std::unique_ptr<std::mutex>> resource_locks_;  // host resources: one island at a time
  std::vector<std::unique_ptr<IslandHandle>> shared_handles_;        // host islands; null for device islands
  std::map<const SharedGpuContext*, GpuClock> clocks_;
  std::vector<std::shared_ptr<SharedGpuContext>> contexts_;  // every context a device island uses
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::string device_io_refusal_;                  // run_device: why not ("" when it can)
  SharedGpuContext* device_io_context_ = nullptr;  // run_device: where the caller's buffers are

  std::mutex lanes_mutex_;
  std::condition_variable lane_freed_;
  std::vector<Lane*> free_lanes_;
  std::atomic<int64_t> next_request_{0};
  std::mutex trace_mutex_;

  // submit(): queued requests and the threads that run them.
  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

}  // namespace hetsched
