// The costs file: one machine's cost-model figures (delegates/cost_model.h)
// in YAML, written by `hetsched calibrate` and named by the profile key
// partition.costs. docs/profiles.md describes the format:
//
//   version: 1
//   source: "calibrated on <host/cpu>, <gpu>, <date>"
//   delegates:
//     cpu:
//       dispatch_us: 3.1
//       island_us: 5.2
//       classes: {conv: {gflops: 400, gbps: 40}, matmul: {...}, elementwise: {...},
//                 reduce: {...}, movement: {...}, free: {...}}
//       measured_us:                  # optional: `calibrate --model`
//         "Conv(f32[1,3,224,224],...)->f32[...]{...}": 41.5
//     vulkan: ...
//   handoffs:
//     upload: {latency_us: 10, gbps: 20}
//     readback: ..., device_copy: ..., layout_conversion: ..., alias: ...
//
// A delegate the file leaves out is absent from CostTable::delegates (the
// caller fills built-in figures); a delegate section present is complete.
// The handoffs section is optional and, when present, complete.
#pragma once

#include <string>

#include "delegates/cost_model.h"
#include "hetsched/status.h"

namespace hetsched {

// Reads and validates a costs file. Errors read like a profile's,
//   "<file>:<line>: <key.path>: <what is wrong> (accepted: <values>)"
// (kInvalidArgument); a file that cannot be read gives
//   "failed to read costs file '<path>': <strerror>" (kNotFound when missing).
// CostTable::source is the file's `source:` as written, or "calibrated: <path>"
// without one. `has_handoffs` (optional) says whether the file had a handoffs
// section; without one `transfers` keep CostTable's defaults, for the caller
// to replace with built-in figures (builtin_transfer_costs).
Result<CostTable> load_costs(const std::string& path, bool* has_handoffs = nullptr);
// Same from YAML text; `source_name` stands in for the file name in messages.
Result<CostTable> parse_costs(const std::string& yaml_text, const std::string& source_name,
                              bool* has_handoffs = nullptr);

// The file for `table`: `header_comment` (any number of lines, each written
// as a "# " comment), then version, source, every delegate of the table and
// every handoff kind. Numbers are written in the shortest form that reads
// back to the same double, so format → parse gives the same table.
std::string format_costs_yaml(const CostTable& table, const std::string& header_comment);

}  // namespace hetsched
