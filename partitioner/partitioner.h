// The partitioner: Graph + delegates in policy order → PartitionPlan.
#pragma once

#include <vector>

#include "delegates/delegate.h"
#include "partitioner/partition_plan.h"
#include "profile/profile.h"

namespace hetsched {

struct PartitionOptions {
  std::string policy = "auto";
  int min_partition_size = 1;
  bool retry_pruned = false;
  std::vector<PinRule> pins;
  std::string fallback = "cpu";  // cpu | error
};

PartitionOptions partition_options_from(const Profile& profile);

// Partitions `graph` over `delegates` (already in policy order; each enabled
// once). The graph must have passed check_graph(). The passes:
//   1. capability: ask every delegate about every node (with reasons);
//   2. pins: nodes matching a pin go where the pin says;
//   3. policy: every other node goes to the first delegate that supports it;
//   4. islands: consecutive runs, in topological order, of one delegate;
//   5. edges: cut values and their bytes.
Result<PartitionPlan> partition(const Graph& graph, const std::vector<Delegate*>& delegates,
                                const PartitionOptions& options);

}  // namespace hetsched
