// Evaluating graphs with the portable CPU kernels, outside any Program or
// Session: the evaluator constant folding calls (the scheduler reaches it
// through delegates/registry.h, never this header), and a whole-graph
// reference run for tests and tools that need expected outputs.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "graph/passes/constant_folding.h"
#include "hetsched/status.h"

namespace hetsched::cpu {

// A NodeEvaluator (graph/passes/constant_folding.h) that runs the node's
// portable CPU kernel on the calling thread (parallel only inside a CPU
// island, on its delegate's pool: kernels/kernel_util.h). An op without a
// kernel is a kUnsupported error. Thread-safe.
NodeEvaluator reference_node_evaluator();

// Runs `graph` (shape-inferred, e.g. by check_graph) node by node with the
// portable kernels. `inputs` are in graph input order and must match their
// types exactly; returns the graph outputs in order. Borrows both.
Result<std::vector<Tensor>> run_graph_reference(const Graph& graph, const std::vector<Tensor>& inputs);

}  // namespace hetsched::cpu
