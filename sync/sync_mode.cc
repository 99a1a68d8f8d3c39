#include "sync/sync_mode.h"

#include <string>

namespace hetsched {

std::string_view sync_mode_name(SyncMode mode) {
  switch (mode) {
    case SyncMode::kTimeline:
      return "timeline";
    case SyncMode::kQueueWaitIdle:
      return "queue_wait_idle";
    case SyncMode::kNone:
      return "none";
  }
  return "?";
}

Result<SyncMode> parse_sync_mode(std::string_view text) {
  for (SyncMode mode : {SyncMode::kTimeline, SyncMode::kQueueWaitIdle, SyncMode::kNone}) {
    if (text == sync_mode_name(mode)) return mode;
  }
  return invalid_argument("failed to parse sync mode '" + std::string(text) +
                          "': expected one of timeline, queue_wait_idle, none");
}

}  // namespace hetsched
