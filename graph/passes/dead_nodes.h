// Removes the nodes whose results nothing uses.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. After: every remaining node has an output that
// a later node reads or the graph exposes; constants only dead nodes read
// are gone too. Returns the number of nodes removed.
Result<int> remove_dead_nodes(Graph& graph);

}  // namespace hetsched
