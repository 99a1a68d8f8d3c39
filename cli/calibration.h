// Measures this machine's cost-model figures (delegates/cost_model.h)
// through the real runtime: small graphs run as sessions of one delegate
// each, timed by the scheduler's own trace, fitted to the roofline the
// auto policy predicts with. `hetsched calibrate` (cmd_calibrate.cc) writes
// the result as a costs file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "delegates/cost_model.h"
#include "hetsched/status.h"
#include "profile/profile.h"

namespace hetsched::cli {

struct CalibrationOptions {
  int repeats = 10;  // timed runs per probe; the median counts
  int warmup = 2;    // untimed runs first (first-run allocations, page faults, shader caches)
  // Called before each probe: what is measured ("cpu", "conv"), how many
  // probes are done and how many there are in all.
  std::function<void(const std::string& section, const std::string& probe, int done, int total)> progress;
};

struct Calibration {
  CostTable table;  // every enabled delegate, every handoff kind; `source` left empty
  // What was not measured and why ("vulkan: reduce not measured (...): built-in
  // figure kept"), for the file's header comment.
  std::vector<std::string> notes;
  // One line per device used: "cpu: 2 threads", "vulkan: llvmpipe (...) [gpu-cpu]".
  std::vector<std::string> devices;
  std::string machine;   // "<hostname>, <cpu model>, N hardware threads"
  std::string gpu_name;  // the first GPU delegate's device, "" when none
};

// Calibrates every delegate `profile` enables, and the handoffs when a GPU
// delegate is among them. The profile's delegate settings (threads, engine,
// device, shared GPU keys, sync mode) are kept; its partition section is not
// used (each probe pins its graph to the delegate it measures).
Result<Calibration> calibrate(const Profile& profile, const CalibrationOptions& options);

// Four significant digits, as the costs file keeps figures: run-to-run
// noise is far larger, and the file is read by people too.
double significant(double v);

}  // namespace hetsched::cli
