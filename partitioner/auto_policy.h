// Policy auto: the assignment of nodes to delegates with the least predicted
// latency (partitioner/plan_cost.h), within capability and pins.
//
// The search (docs/architecture.md, "Partitioning"):
//   1. seeds: the plan of every delegate order (vgf_first, vulkan_first,
//      cpu_first and the other permutations of the enabled delegates), each
//      node on the first delegate of the order that may take it. The best
//      single delegate and the best fixed order are among them, so the
//      result is never predicted worse than either;
//   2. local search from the best seed, first improvement, until no move
//      helps: move a whole segment (a connected run of nodes on one
//      delegate — an island before acyclicity splits and pruning) to another
//      delegate, or move one node on a segment's boundary to a neighbour's
//      delegate. Segment moves remove tiny islands whose handoffs cost more
//      than they save; boundary moves grow or shrink islands by a node;
//   3. the searched plan replaces the best seed only when it is predicted
//      at least min_gain (15%) faster: smaller gains are within the model's
//      error (it misses the host waits of a plan with many GPU↔CPU
//      transitions), and measured on the H100 they were losses.
// Every candidate is one O(nodes + edges) simulation; the number of
// simulations is capped so that large graphs plan in bounded time.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "partitioner/plan_cost.h"

namespace hetsched {

struct AutoSearchInput {
  // allowed[d][n]: delegate d may take node n (capability, fallback rules).
  std::vector<std::vector<bool>> allowed;
  // By node: the delegate a pin fixes, or -1.
  std::vector<int> pinned;
  // Delegate orders to seed from, and their names ("vulkan_first", "cpu,vgf,vulkan").
  std::vector<std::vector<int>> seed_orders;
  std::vector<std::string> seed_names;
  // How much faster than the best seed the searched plan must be predicted.
  double min_gain = 0.15;
};

struct AutoSearchResult {
  std::vector<int> delegate_of;  // by node; -1 where no delegate may take it
  double predicted_s = 0;
  // Every seed's prediction, by name, then "auto" with the result's.
  std::vector<std::pair<std::string, double>> candidates;
  int simulations = 0;
};

AutoSearchResult search_assignment(const Graph& graph, const PlanCostModel& model, const AutoSearchInput& input);

}  // namespace hetsched
