// The program's memory plan: one arena per domain — the host, and each GPU
// resource whose device islands keep tensors there — with an offset for
// every buffer a step touches, so buffers never live together share bytes.
//
// What is planned:
//   host    program tensors that reach the host (CPU islands' inputs and
//           outputs, readback destinations, upload sources), except the
//           model's inputs and outputs, which are the caller's memory, and
//           constants, which the program holds.
//   device  per device island: its inputs, its outputs and its scratch block
//           (the delegate's intermediates, sized by Delegate::device_memory).
//           An alias handoff makes the reader's input the writer's output.
//
// Lifetimes come from the step DAG, not only from program order: the
// scheduler runs independent steps at the same time, so two buffers share
// bytes only when every step touching the earlier one is an ancestor of
// the step that first writes the later one (scheduler/step_graph.h). The
// arena planner (memory/arena_planner.h) places them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "scheduler/program.h"

namespace hetsched {

// `needs[i]`: device island i's needs (nullopt for host islands);
// `domains[i]`: its resource ("gpu:<key>"), ignored for host islands.
// The program's steps must be planned already. `device_reuse` false gives
// every device buffer bytes of its own (sync mode none: GPU steps do not
// wait for each other, so no order licenses reuse). kInvalidArgument when
// sizes overflow.
Result<MemoryPlan> plan_program_memory(const Program& program, const std::vector<std::optional<DeviceMemoryNeeds>>& needs,
                                       const std::vector<std::string>& domains, bool device_reuse = true);

}  // namespace hetsched
