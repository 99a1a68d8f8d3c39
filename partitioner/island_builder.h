// Island formation: given each node's delegate, group nodes into islands.
//
// An island is a connected set of nodes on one delegate. Contracting every
// island to one vertex must leave the graph acyclic — otherwise no order could
// run the islands one after another (an island would need its own output
// through another island). The classic trap is a diamond whose two arms go
// to different delegates: a → {b on X, c on Y} → d, with a, d on Y. Merging a,
// c and d into one Y island would make it both feed and wait for b.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "partitioner/partition_plan.h"

namespace hetsched {

// Forms islands from `delegate_of` (indexed by NodeId), visiting nodes in
// topological order and merging each into the island of one of its
// producers on the same delegate when that keeps the island graph acyclic.
// Returns islands in a valid execution order (a topological order of the
// island graph), with ids 0..n-1 in that order, and sets island_of[node].
std::vector<PlannedIsland> form_islands(const Graph& graph, const std::vector<std::string>& delegate_of,
                                        std::vector<int>& island_of);

// Fills each island's inputs/outputs/bytes and returns the cut edges
// (model inputs from the host, model outputs to the host, island → island).
std::vector<CutEdge> connect_islands(const Graph& graph, std::vector<PlannedIsland>& islands,
                                     const std::vector<int>& island_of);

// True when the island graph has no cycle (for tests and as a check).
bool island_graph_is_acyclic(const Graph& graph, const std::vector<int>& island_of, int num_islands);

}  // namespace hetsched
