// Shape inference over a whole graph.
#pragma once

#include <map>
#include <string>

#include "graph/graph.h"

namespace hetsched {

// Input shapes a user gives for dynamic dims (e.g. --input-shape x=1x3x640x640).
using InputShapes = std::map<std::string, Shape>;

// 1. Applies `input_shapes` to the graph inputs (a given shape must agree
//    with every static dim of the declared one).
// 2. Refuses any input that still has a dynamic dim, naming it and the flag
//    that resolves it.
// 3. Runs each node's schema in order, filling its output types.
// Errors name the node and op. Unknown ops are an error here; callers that
// want to preview a model with unknown ops check find_op_schema first.
Status infer_shapes(Graph& graph, const InputShapes& input_shapes = {});

// Steps 1 and 2 of infer_shapes on their own: passes that infer node by node
// (the import-time constant folding) start with these.
Status apply_input_shapes(Graph& graph, const InputShapes& input_shapes);
// Step 3 for one node, whose inputs must already have known types.
Status infer_node_shapes(Graph& graph, NodeId node);

// validate() + infer_shapes(): what every loader runs before handing a graph on.
Status check_graph(Graph& graph, const InputShapes& input_shapes = {});

}  // namespace hetsched
