// The CPU delegate: runs an island on the host with the portable kernels.
//
// Its compiled blob is the island's sub-graph, serialized (graph_serialize.h).
// init() deserializes it once, allocates every intermediate tensor and
// resolves each node's kernel, so execute() only runs kernels.
#pragma once

#include <memory>

#include "delegates/delegate.h"
#include "delegates/registry.h"

namespace hetsched::cpu {

// Options: "threads" (0 = all hardware threads), "engine" (portable; xnnpack
// once it exists).
Result<std::unique_ptr<Delegate>> make_cpu_delegate(const DelegateOptions& options);

}  // namespace hetsched::cpu
