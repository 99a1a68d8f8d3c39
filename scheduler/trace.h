// Run statistics and traces: what one request did, where and when.
//
// Every event is on one track: a resource ("cpu", "gpu:<context key>") or
// "handoffs". Times are milliseconds on the host's steady clock, counted from
// the Session's creation, so the events of concurrent requests line up. GPU
// events carry GPU timestamps mapped onto that clock (gpu_clock = true); the
// others are host times of the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "hetsched/status.h"

namespace hetsched {

struct TraceEvent {
  std::string name;    // "island 0 (cpu)", "upload 'x' host → vgf#0"
  std::string track;   // "cpu", "gpu:token:group", "handoffs"
  double start_ms = 0; // since the session was created
  double ms = 0;
  int64_t request = 0; // the request it belongs to (Session-wide, from 0)
  bool gpu_clock = false;  // timed by GPU timestamps
  // logging.profile_ops: a piece of an island (a kernel, an XNNPACK segment,
  // a dispatch), nested in its island's event on the same track; `nodes`
  // names the graph nodes it ran and `island` its island's event name.
  bool op = false;
  std::vector<std::string> nodes{};
  std::vector<std::string> ops{};  // their op types
  std::string op_kind{};  // OpTiming::kind
  std::string island{};   // "island 3 (cpu)"
};

// An op event's name: "Conv 'conv1'"-style for one node, "xnnpack: 12 nodes
// (conv1 .. relu4)" for a segment.
std::string op_event_name(const OpTiming& timing);

struct RunStats {
  int64_t request = 0;
  double start_ms = 0;  // when the request began, since the session was created
  double total_ms = 0;  // wall time of the request, waiting for a free lane excluded
  double queued_ms = 0; // time spent waiting for a free lane (max_in_flight requests already running)
  int host_waits = 0;   // times the host blocked on a device
  std::vector<TraceEvent> events;  // in the order they started
};

// Writes the events of `runs` as Chrome trace JSON (viewable in Perfetto):
// one track (thread) per resource and one for handoffs, each event with its
// request id in args.
Status write_trace(const std::vector<const RunStats*>& runs, const std::string& path);

// The same JSON as a string (the public API's RunInfo::trace_json).
std::string trace_json(const std::vector<const RunStats*>& runs);

// The same for one request.
Status write_trace(const RunStats& run, const std::string& path);

// Busy time per track: the length of the union of its events' intervals
// within [from_ms, to_ms], divided by to_ms - from_ms.
std::vector<std::pair<std::string, double>> busy_fractions(const std::vector<const RunStats*>& runs, double from_ms,
                                                           double to_ms);

}  // namespace hetsched
