#include "scheduler/trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "partitioner/preview.h"  // json_quote

namespace hetsched {

namespace {

void write_trace_json(const std::vector<const RunStats*>& runs, std::ostream& f) {
  // Chrome trace event format: complete events ("ph":"X") in microseconds,
  // one thread id per track. Resources first, handoffs last.
  std::map<std::string, int> tids;
  for (const RunStats* run : runs)
    for (const TraceEvent& e : run->events) tids.emplace(e.track, 0);
  int next = 1;
  for (auto& [track, tid] : tids)
    if (track != "handoffs") tid = next++;
  if (tids.count("handoffs")) tids["handoffs"] = next;
  f << "{\"traceEvents\": [\n";
  bool first = true;
  for (const RunStats* run : runs) {
    for (const TraceEvent& e : run->events) {
      f << (first ? "" : ",\n") << "  {\"name\": " << json_quote(e.name) << ", \"ph\": \"X\", \"pid\": 1, \"tid\": "
        << tids[e.track] << ", \"ts\": " << e.start_ms * 1000.0 << ", \"dur\": " << e.ms * 1000.0
        << ", \"args\": {\"request\": " << e.request << ", \"track\": " << json_quote(e.track)
        << ", \"clock\": " << (e.gpu_clock ? "\"gpu\"" : "\"host\"");
      if (e.op) {
        f << ", \"island\": " << json_quote(e.island) << ", \"kind\": " << json_quote(e.op_kind) << ", \"nodes\": [";
        for (size_t i = 0; i < e.nodes.size(); ++i) f << (i ? ", " : "") << json_quote(e.nodes[i]);
        f << "]";
      }
      f << "}}";
      first = false;
    }
  }
  for (const auto& [track, tid] : tids)
    f << (first ? "" : ",\n") << "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " << tid
      << ", \"args\": {\"name\": " << json_quote(track) << "}}";
  f << "\n]}\n";
}

}  // namespace

std::string trace_json(const std::vector<const RunStats*>& runs) {
  std::ostringstream s;
  write_trace_json(runs, s);
  return s.str();
}

Status write_trace(const std::vector<const RunStats*>& runs, const std::string& path) {
  std::ofstream f(path, std::ios::trunc);
  if (!f) return not_found("failed to write trace '" + path + "': " + std::strerror(errno));
  write_trace_json(runs, f);
  if (!f) return internal_error("failed to write trace '" + path + "': write error");
  return Status::ok();
}

std::string op_event_name(const OpTiming& timing) {
  const auto& n = timing.nodes;
  if (n.empty()) return timing.kind;
  if (n.size() == 1) return timing.kind + " " + n[0];
  if (n.size() <= 3) {
    std::string joined;
    for (const std::string& name : n) joined += (joined.empty() ? "" : "+") + name;
    return timing.kind + " " + joined;
  }
  return timing.kind + ": " + std::to_string(n.size()) + " nodes (" + n.front() + " .. " + n.back() + ")";
}

Status write_trace(const RunStats& run, const std::string& path) {
  return write_trace(std::vector<const RunStats*>{&run}, path);
}

std::vector<std::pair<std::string, double>> busy_fractions(const std::vector<const RunStats*>& runs, double from_ms,
                                                           double to_ms) {
  std::map<std::string, std::vector<std::pair<double, double>>> intervals;
  for (const RunStats* run : runs)
    for (const TraceEvent& e : run->events) {
      const double a = std::max(e.start_ms, from_ms), b = std::min(e.start_ms + e.ms, to_ms);
      if (b > a) intervals[e.track].emplace_back(a, b);
    }
  std::vector<std::pair<std::string, double>> busy;
  const double span = to_ms - from_ms;
  for (auto& [track, list] : intervals) {
    std::sort(list.begin(), list.end());
    double covered = 0, end = -1e300;
    for (const auto& [a, b] : list) {
      if (a > end) {
        covered += b - a;
        end = b;
      } else if (b > end) {
        covered += b - end;
        end = b;
      }
    }
    busy.emplace_back(track, span > 0 ? covered / span : 0.0);
  }
  return busy;
}

}  // namespace hetsched
