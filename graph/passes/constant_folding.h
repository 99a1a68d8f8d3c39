// Constant folding at import: evaluates every node whose result is known
// before the model runs and makes its outputs constants.
#pragma once

#include <functional>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Computes the outputs of node `node` of `graph` from its input tensors
// (nullptr for omitted inputs), with the output types shape inference gave.
// graph/ cannot run kernels itself; the caller supplies this (the scheduler
// passes the registry's reference_node_evaluator(), delegates/registry.h: the
// portable CPU kernels of delegates/cpu/cpu_reference.h). A kUnsupported
// status means "cannot evaluate this op" and leaves the node in place.
using NodeEvaluator =
    std::function<Result<std::vector<Tensor>>(const Graph& graph, NodeId node, std::vector<const Tensor*> inputs)>;

// Before: `graph` is valid (Graph::validate) and its inputs have static
// shapes (apply_input_shapes). After: every node whose inputs are all
// constants is gone and its outputs are constants; so is every Shape node,
// whose result only needs its input's static shape. Shape → Gather → Concat
// → Reshape chains thus collapse into constant Reshape shapes. Nodes are
// visited in order and each is shape-inferred just before, so one sweep
// reaches the fixed point; the remaining nodes have inferred types.
// Nodes that produce a graph output stay, so that the graph still computes
// every output. Returns the number of nodes folded.
Result<int> fold_constants(Graph& graph, const NodeEvaluator& evaluate);

}  // namespace hetsched
