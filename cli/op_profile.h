// `hetsched bench --profile-ops`: where a request's time goes, per timed
// piece of an island (a portable kernel, an XNNPACK segment, a GPU dispatch)
// and per op type, from the op events logging.profile_ops adds to RunStats.
#pragma once

#include <string>
#include <vector>

#include "scheduler/trace.h"

namespace hetsched::cli {

struct OpPiece {
  std::string island;  // "island 0 (cpu)"
  std::string track;   // "cpu", "gpu:hetsched:0"
  std::string kind;    // OpTiming::kind
  std::string name;    // op_event_name
  std::vector<std::string> nodes, ops;
  double p50_ms = 0;   // over the requests
  double share = 0;    // of the request's p50 latency
};

struct OpTypeTime {
  std::string track;
  std::string op;  // "Conv", or "xnnpack segment" for a segment of several op types
  int pieces = 0;
  double ms = 0;   // sum of its pieces' p50
  double share = 0;
};

struct OpProfile {
  int requests = 0;
  double request_p50_ms = 0;
  std::vector<OpPiece> pieces;    // by island (first start), then run order
  std::vector<OpTypeTime> types;  // by track, then time, longest first
};

// Pieces of several nodes count under their first node's op type (a GPU
// dispatch's anchor: Conv in Conv+Relu); an XNNPACK segment whose nodes
// have several op types counts as "xnnpack segment" (Debian's XNNPACK
// cannot time the operators of one runtime apart).
OpProfile summarize_op_profile(const std::vector<RunStats>& runs);

// Text: per island, its pieces longest first (at most `rows` each, the
// rest summed), then the op-type table.
void print_op_profile(const OpProfile& profile, int rows);
// {"request_p50_ms", "pieces": [{island, track, kind, nodes, ops, p50_ms, share}], "op_types": [...]}.
std::string op_profile_json(const OpProfile& profile);

}  // namespace hetsched::cli
