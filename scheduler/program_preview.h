// What `hetsched preview` shows of a compiled program beside its partition:
// the handoffs as the program does them (alias, layout conversion, ...) and
// the memory plan per domain.
#pragma once

#include <string>
#include <vector>

#include "partitioner/preview.h"
#include "scheduler/delegate_set.h"
#include "scheduler/program.h"

namespace hetsched {

// One line per handoff step (host copies, which move nothing, left out).
std::vector<PreviewHandoff> program_handoffs(const Program& program);

// Each device island's command buffer counts, asked of its delegate
// (Delegate::command_stream) from the island's blob; host islands and
// delegates missing from `delegates` are left out. Errors name the island.
Result<std::vector<PreviewCommands>> program_commands(const Program& program, const DelegateSet& delegates);

// "memory (per request in flight)" with one row per domain: planned bytes,
// lower bound, their ratio, buffer count.
std::string format_memory_text(const MemoryPlan& plan);
// [{"domain", "planned_bytes", "lower_bound", "buffers"}]
std::string format_memory_json(const MemoryPlan& plan);

}  // namespace hetsched
