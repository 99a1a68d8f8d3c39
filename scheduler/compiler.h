// Plan → Program: each delegate compiles its islands into blobs, and the
// steps that run them in order are laid out.
#pragma once

#include <optional>
#include <vector>

#include "graph/graph.h"
#include "partitioner/partition_plan.h"
#include "profile/profile.h"
#include "scheduler/delegate_set.h"
#include "scheduler/program.h"

namespace hetsched {

// Steps that run the program's islands in order with explicit handoffs:
// upload (host → device island input), device copy (device island output →
// another device island's input), readback (device → host, before a host
// island reads it and for model outputs). Each handoff step's `island` is
// the device island on the receiving side (upload, device copy) or holding
// the data (readback).
// A device island's input that another island on the same GPU context
// wrote in the same layout is an alias (no copy). `needs` as from
// device_memory_needs; each step's `layout` names a conversion on the way
// ("NCHW->NHWC"), "" for none.
Result<std::vector<ProgramStep>> plan_steps(const Program& program, const DelegateSet& delegates,
                                            const std::vector<std::optional<DeviceMemoryNeeds>>& needs);

// What each device island needs from the device arena (nullopt for host
// islands), from its delegate.
Result<std::vector<std::optional<DeviceMemoryNeeds>>> device_memory_needs(const Program& program,
                                                                          const DelegateSet& delegates);
// Fills program.memory (scheduler/memory_plan.h) for its planned steps;
// under sync mode none device buffers are not reused.
Status plan_memory(Program& program, const DelegateSet& delegates,
                   const std::vector<std::optional<DeviceMemoryNeeds>>& needs, SyncMode sync);

Result<Program> compile_program(const Graph& graph, const PartitionPlan& plan, const DelegateSet& delegates,
                                const Profile& profile);

}  // namespace hetsched
