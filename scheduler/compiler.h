// Plan → Program: each delegate compiles its islands into blobs, and the
// steps that run them in order are laid out.
#pragma once

#include "graph/graph.h"
#include "partitioner/partition_plan.h"
#include "profile/profile.h"
#include "scheduler/delegate_set.h"
#include "scheduler/program.h"

namespace hetsched {

Result<Program> compile_program(const Graph& graph, const PartitionPlan& plan, const DelegateSet& delegates,
                                const Profile& profile);

}  // namespace hetsched
