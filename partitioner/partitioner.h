// The partitioner: Graph + delegates in policy order → PartitionPlan.
#pragma once

#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "partitioner/partition_plan.h"

namespace hetsched {

// A pin: matching nodes go to `delegate` whatever the policy.
struct PartitionPin {
  std::string op;        // match by op type, or
  std::string node;      // match by node name (exactly one of op/node is set)
  std::string delegate;  // where matching nodes go
};

// The partition settings. The partitioner does not read profiles: the
// scheduler fills this from one (scheduler/partition_profile.h).
struct PartitionOptions {
  // As the profile spells it; recorded in the plan. "auto" chooses by cost;
  // anything else places nodes in the order of the delegates given.
  std::string policy = "list";
  int min_partition_size = 1;
  bool retry_pruned = false;
  std::vector<PartitionPin> pins;
  std::string fallback = "cpu";  // cpu | error
  // This machine's figures for the cost model (not owned). Policy auto
  // needs them; with them every plan also carries a predicted latency.
  const CostTable* costs = nullptr;
  // Policy auto keeps the best delegate order unless its search finds a plan
  // predicted this much faster (auto_policy.h).
  double auto_min_gain = 0.15;
};

// Partitions `graph` over `delegates` (already in policy order; each enabled
// once). The graph must have passed check_graph(). The passes (partitioner.cc):
//   1. capability: every delegate answers for every node, with reasons;
//   2. pins: nodes matching a pin go where the pin says;
//   3. policy: every other node goes to the first delegate that supports it
//      (policy auto: where the plan with the least predicted latency puts
//      it, auto_policy.h);
//   4. islands + pruning: connected, acyclic islands (island_builder.h);
//      non-CPU islands below min_partition_size compute nodes are pruned to
//      the next delegate (retry_pruned) or the CPU, until none is;
//   5. strict mode: fallback: error refuses nodes left to the CPU fallback;
//   6. edges: cut values and their bytes;
//   7. with costs, the predicted time of every island, edge and the request
//      (plan_cost.h).
// Every node records the pass that placed it and why (NodeAssignment).
Result<PartitionPlan> partition(const Graph& graph, const std::vector<Delegate*>& delegates,
                                const PartitionOptions& options);

}  // namespace hetsched
