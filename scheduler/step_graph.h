// The program's steps as a DAG: an edge a → b when step b reads what step a
// wrote. Locations are a tensor's host slot, an island's device input for a
// tensor, and an island's device output; each is written once per request,
// so read-after-write edges are all the order there is (order on one
// resource comes from the resource: one CPU pool, one in-order GPU queue).
// A pure function of the Program, testable without a device.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/program.h"

namespace hetsched {

struct StepGraph {
  // deps[s]: the steps s must wait for, ascending; users[s]: the reverse.
  std::vector<std::vector<int>> deps;
  std::vector<std::vector<int>> users;
  // reaches(a, b): b depends on a, directly or through other steps.
  bool reaches(int a, int b) const { return a == b || ((reach_[static_cast<size_t>(b)][a / 64] >> (a % 64)) & 1); }

  std::vector<std::vector<uint64_t>> reach_;  // reach_[b]: bitset of every step b depends on
};

// `device_island[i]`: island i keeps its tensors in device memory. Program
// inputs and constants are on the host before any step runs.
StepGraph build_step_graph(const Program& program, const std::vector<bool>& device_island);

}  // namespace hetsched
