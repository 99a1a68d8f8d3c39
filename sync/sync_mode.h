// SyncMode: how GPU steps are ordered against each other and the host
// (the RFC's gpu_shared_sync_mode).
#pragma once

#include <string_view>

#include "hetsched/status.h"

namespace hetsched {

enum class SyncMode {
  // GPU steps wait on and signal the shared timeline semaphore on the device;
  // the host waits only before a CPU step that reads GPU results, and at the
  // end of a run. The default.
  kTimeline,
  // The host waits for the queue to go idle after every GPU step. Slow and
  // simple: for debugging and early bring-up.
  kQueueWaitIdle,
  // No waits between steps at all. Only valid when the runtime has proven the
  // steps independent; the host still waits once at the end of a run.
  kNone,
};

// "timeline", "queue_wait_idle", "none".
std::string_view sync_mode_name(SyncMode mode);
// Parses the names above; anything else is kInvalidArgument listing them.
Result<SyncMode> parse_sync_mode(std::string_view text);

}  // namespace hetsched
