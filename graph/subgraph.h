// Cutting a standalone graph out of a larger one: how each island of a
// partition becomes a graph of its own for its delegate to compile.
#pragma once

#include <span>

#include "graph/graph.h"

namespace hetsched {

// A graph holding `nodes` of `graph` (same names, ops and attributes, in the
// order given, which must be topological), with `inputs` as its inputs and
// `outputs` as its outputs, in the order given, and every constant those
// nodes read. Value names and types (with their type_known flags) are copied;
// constant data is shared with `graph` through the same shared_ptr, not
// copied. The new graph keeps the name and opset of `graph`.
//
// Every value a node reads must be one of `inputs`, a constant, or an output
// of an earlier node in `nodes`; every output must be one of `inputs` or an
// output of one of `nodes`. Ids out of range, or a value that breaks these
// rules, is a caller bug and aborts with a message naming it. `graph` is not
// retained.
Graph extract_subgraph(const Graph& graph, std::span<const NodeId> nodes, std::span<const ValueId> inputs,
                       std::span<const ValueId> outputs);

}  // namespace hetsched
