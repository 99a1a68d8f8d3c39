// Plan → Program: each delegate compiles its islands into blobs, and the
// steps that run them in order are laid out.
#pragma once

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
Result<std::vector<ProgramStep>> plan_steps(const Program& program, const DelegateSet& delegates);

Result<Program> compile_program(const Graph& graph, const PartitionPlan& plan, const DelegateSet& delegates,
                                const Profile& profile);

}  // namespace hetsched
