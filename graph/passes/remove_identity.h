// Removes the nodes that only pass their input through: Identity, Dropout
// in inference form, and pools of a 1x1 window at stride 1 without padding.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. After: no Identity node, and no Dropout node
// with a single output (a Dropout with a mask output is left for shape
// inference to refuse), remains where it can be removed: its readers read
// its input instead. When its output is a graph output, the node that
// produced its input writes that output directly, so graph outputs keep the
// names the model gave them; a pass-through of a graph input or a constant
// to a graph output stays, since no node could take its place.
// Returns the number of nodes removed.
Result<int> remove_identity_nodes(Graph& graph);

}  // namespace hetsched
