// Step sync plans: what one GPU step's submit waits on and signals, and when
// the host has to wait, for each SyncMode. Pure functions of plain values, so
// the executor's sync decisions can be tested without a GPU.
//
// Timeline values come from the shared TimelineSemaphore. A GPU step's signal
// value is not planned here: it is reserved at submit time, under the queue
// lock (SharedGpuContext::submit), so that concurrent runs on one context
// signal in increasing order. The plan says *whether* to signal; the executor
// records the value the submit returned and passes the highest value of a
// step's producers as `wait_for` to the next plan.
#pragma once

#include <cstdint>

#include "sync/sync_mode.h"

namespace hetsched {

// How one GPU step is submitted.
struct GpuStepSync {
  // Device-side wait on the timeline before the step's commands run; 0 means
  // no wait (the timeline starts at 0, so 0 is always reached).
  uint64_t wait_value = 0;
  // Signal a freshly reserved timeline value when the step's commands finish.
  bool signal = false;
  // The host calls vkQueueWaitIdle right after the submit.
  bool queue_wait_idle_after = false;

  bool operator==(const GpuStepSync&) const = default;
};

// Where the host may have to wait for GPU work.
enum class HostWaitPoint {
  kBeforeCpuStep,  // a CPU step (or a readback by the host) is about to read GPU results
  kEndOfRun,       // the run is about to return its outputs
};

// The plan for a GPU step under `mode`. `wait_for` is the highest timeline
// value signalled by the GPU steps this one depends on (0: none).
//   timeline:        wait for `wait_for` on the device, signal.
//   queue_wait_idle: no semaphores; the host idles the queue afterwards.
//   none:            no wait; signal so the end of the run can wait once.
GpuStepSync plan_gpu_step(SyncMode mode, uint64_t wait_for);

// The timeline value the host must wait for at `point`, given that the GPU
// steps before it signalled up to `last_signalled` (0: none). 0 means the
// host need not wait.
//   timeline:        before CPU steps and at the end.
//   queue_wait_idle: never (the queue was idled after each GPU step).
//   none:            only at the end of the run.
uint64_t plan_host_wait(SyncMode mode, HostWaitPoint point, uint64_t last_signalled);

}  // namespace hetsched
