// The executor: runs one request's steps on one lane, each as soon as the
// steps it depends on (scheduler/step_graph.h) have been issued and its
// resource can take it.
//
// One thread drives a request. GPU steps (device islands, uploads, device
// copies) are submitted as soon as their inputs are issued, waiting for
// their GPU inputs on the device through the context's timeline, so a chain
// of GPU steps never blocks the host. Host steps (CPU islands, readbacks)
// run on the driving thread once their inputs are complete; among ready host
// steps it takes first those that need not wait for the GPU, so a CPU island
// runs while an independent GPU island is still on the queue. A host step's
// GPU side (a staged readback's copy) is submitted when the step becomes
// ready, so it follows its producer on the queue while the thread runs CPU
// islands. The host waits only where a host step or the caller needs a GPU
// result.
//
// Concurrency: requests on different lanes run at the same time on their
// own threads; CPU islands of all lanes take one lock per resource (one CPU
// pool), GPU submits go through each context's queue lock.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "delegates/delegate.h"
#include "graph/tensor.h"
#include "scheduler/program.h"
#include "scheduler/step_graph.h"
#include "scheduler/step_runner.h"
#include "scheduler/trace.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/gpu_timestamps.h"
#include "shared_gpu/transfer.h"

namespace hetsched {

// One set of everything a request writes: host tensors, device islands
// (their buffers), the handoffs bound to them and GPU timestamp queries.
// A session has max_in_flight lanes; a request holds one while it runs.
struct Lane {
  // Declared in reverse order of destruction: runners use the buffers of
  // handles and transfers; timestamps use the transfers' command pools;
  // handles bind the arenas.
  AlignedBuffer host_arena;           // the memory plan's host domain
  std::vector<Buffer> device_arenas;  // by memory plan domain (index 0, the host, unused)
  std::vector<std::unique_ptr<IslandHandle>> device_handles;  // by island; null for shared host islands
  std::vector<std::unique_ptr<GpuTransfers>> transfers;      // one per context
  std::map<const SharedGpuContext*, GpuTimestamps> timestamps;
  std::vector<std::unique_ptr<StepRunner>> runners;  // by program step
  // By program step: the variant a request with GPU buffers runs for a
  // model input's upload or a model output's readback (scheduler/device_io.h);
  // null for other steps.
  std::vector<std::unique_ptr<StepRunner>> device_io_runners;
  // Set for the request in progress when it brought GPU buffers.
  const DeviceIoRequest* device_io = nullptr;
  std::vector<int> timestamp_pair;                   // by program step; -1: none
  // By program step, for steps that write device memory from the host
  // (StepRunner::writes_from_host): the GPU steps on its context it depends
  // on, directly or not, whose work must be done before it writes.
  std::vector<std::vector<int>> host_write_waits;
  // Host tensors, by program tensor index: arena ranges and constants fixed
  // at load, the request's inputs and outputs set per request, null for
  // tensors that never reach the host.
  std::vector<TensorRef> slots;
  int run_index = 0;
};

// The session-wide things the executor reads.
struct ExecutorConfig {
  const Program* program = nullptr;
  const StepGraph* graph = nullptr;
  SyncMode sync = SyncMode::kTimeline;
  std::chrono::steady_clock::time_point epoch;  // trace times count from here
  const std::map<const SharedGpuContext*, GpuClock>* clocks = nullptr;
  // How long one host wait on GPU work may take before the run fails as hung.
  std::chrono::nanoseconds gpu_wait_timeout = kGpuWaitTimeout;
};

// Runs every step of the program once on `lane`, whose input slots hold the
// request's inputs; outputs are in the lane's output slots afterwards. With
// `stats`, fills its events (GPU steps timed by GPU timestamps where the
// queue has them) and host waits.
Status run_request(const ExecutorConfig& config, Lane& lane, int64_t request, RunStats* stats);

}  // namespace hetsched
