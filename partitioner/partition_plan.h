// The PartitionPlan: where every node runs and why, the islands, and the
// edges cut between them. It is plain data: the preview prints it, the
// compiler turns it into a Program.
#pragma once

#include <string>
#include <vector>

#include "delegates/cost_model.h"
#include "graph/graph.h"

namespace hetsched {

// Which partitioner pass decided a node's delegate.
enum class AssignPass : uint8_t {
  kPinned,       // a profile pin
  kPolicy,       // the first delegate in policy order that supports the node
  kRetried,      // pruned from an earlier delegate, taken by a later one
  kPruned,       // pruned from a delegate, fell back to the CPU
  kFallback,     // no preferred delegate supports it; CPU fallback
  kCost,         // policy auto: the delegate of the plan with the least predicted latency
};
std::string_view assign_pass_name(AssignPass pass);

struct NodeAssignment {
  std::string delegate;
  AssignPass pass = AssignPass::kPolicy;
  std::string reason;  // human text: "first in policy vgf_first", "pinned by op Softmax", ...
  int island = -1;
};

struct PlannedIsland {
  int id = 0;
  std::string delegate;
  std::vector<NodeId> nodes;    // in graph order
  std::vector<ValueId> inputs;  // non-constant values read from outside
  std::vector<ValueId> outputs; // values read outside the island, or graph outputs
  size_t input_bytes = 0;
  size_t output_bytes = 0;
  // The cost model's prediction (when the plan has one): compute time with
  // the island's overhead, and when it starts in the simulated request.
  double predicted_ms = 0;
  double predicted_start_ms = 0;
};

// A value crossing from one island (or the host: island -1) to another
// (or the host). Model inputs and outputs appear as edges from/to the host.
struct CutEdge {
  ValueId value = kNoValue;
  int from_island = -1;
  int to_island = -1;
  size_t bytes = 0;
  // How the cost model expects the value to cross, and what that costs
  // (predicted_ms 0 for a second reader of a value already moved there).
  CutKind kind = CutKind::kAlias;
  double predicted_ms = 0;
};

// An island removed because it was too small.
struct PrunedIsland {
  std::string delegate;
  std::vector<NodeId> nodes;
  int compute_nodes = 0;
  int min_size = 0;
  std::string went_to;  // the delegate that took the nodes instead
};

struct PartitionPlan {
  std::string policy;                   // as written in the profile, e.g. "vgf_first"
  std::string policy_note;              // e.g. "auto = vgf_first until the cost model lands"
  std::vector<std::string> order;       // delegate order used
  std::vector<std::string> device_delegates;  // those of `order` that keep tensors in GPU memory
  std::vector<NodeAssignment> nodes;    // indexed by NodeId
  std::vector<PlannedIsland> islands;   // in execution order
  std::vector<CutEdge> edges;
  std::vector<PrunedIsland> pruned;
  // Per delegate, the ops it refused and why ("Gather: data-dependent indexing").
  std::vector<std::pair<std::string, std::vector<std::string>>> unsupported;
  // The cost model's predicted latency of one request (ms; 0 when the plan
  // was made without costs), where its figures came from, and for auto every
  // plan it considered with its prediction ("vulkan_first" → 1.20 ms, ...).
  double predicted_ms = 0;
  std::string cost_source;
  std::vector<std::pair<std::string, double>> candidates;
};

}  // namespace hetsched
