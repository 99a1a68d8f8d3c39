#include "sync/step_sync.h"

namespace hetsched {

GpuStepSync plan_gpu_step(SyncMode mode, uint64_t wait_for) {
  switch (mode) {
    case SyncMode::kTimeline:
      return {.wait_value = wait_for, .signal = true, .queue_wait_idle_after = false};
    case SyncMode::kQueueWaitIdle:
      return {.wait_value = 0, .signal = false, .queue_wait_idle_after = true};
    case SyncMode::kNone:
      return {.wait_value = 0, .signal = true, .queue_wait_idle_after = false};
  }
  return {};
}

uint64_t plan_host_wait(SyncMode mode, HostWaitPoint point, uint64_t last_signalled) {
  switch (mode) {
    case SyncMode::kTimeline:
      return last_signalled;
    case SyncMode::kQueueWaitIdle:
      return 0;
    case SyncMode::kNone:
      return point == HostWaitPoint::kEndOfRun ? last_signalled : 0;
  }
  return 0;
}

}  // namespace hetsched
