// Predicted latency of one request for an assignment of nodes to delegates:
// the cost model of delegates/cost_model.h applied to a whole plan.
//
// The request is simulated node by node in graph (topological) order. A node
// starts when its inputs have arrived where it runs and its delegate's
// resource (the CPU pool, a GPU queue) is free; it takes the delegate's
// estimate, plus the island overhead when it opens an island (no producer on
// its delegate). A value read on another delegate arrives after its handoff:
// upload, readback, device copy, layout conversion or alias by where it is
// and where it goes, once per (value, destination) however many nodes read
// it there. Resources run in parallel, so independent branches on the CPU
// and a GPU overlap, as the resource scheduler runs them (a GPU of device
// class gpu-cpu, such as lavapipe, shares the CPU's resource: its "GPU" is
// the host's cores). A host delegate with edge copies (edge_gbps) pays,
// on its own resource, for copying each value it reads from elsewhere in
// and each value it makes for elsewhere (or the caller) out. Handoffs add
// latency but hold no resource. The latency is when the last output is back
// on the host. One evaluation is O(nodes + edges): the auto search runs
// thousands.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "graph/graph.h"

namespace hetsched {

// The node's measured time on a delegate with `costs` (its op signature in
// DelegateCosts::measured_us), if any; free nodes (Reshape, ...) never.
std::optional<double> measured_seconds(const Graph& graph, NodeId node, const DelegateCosts& costs);

class PlanCostModel {
 public:
  // `delegates` in any fixed order (indices below refer to it); `table` must
  // outlive the model. Delegates missing from the table use built-in figures
  // for their device class.
  PlanCostModel(const Graph& graph, const std::vector<Delegate*>& delegates, const CostTable& table);

  int num_delegates() const { return static_cast<int>(delegates_.size()); }
  // The delegate's estimate for node n (seconds), whether or not it supports it.
  double node_seconds(int d, NodeId n) const { return node_s_[d][n]; }
  double island_seconds(int d) const { return island_s_[d]; }
  // How a value of `type` crosses from delegate `from` to delegate `to`
  // (-1: the host, for graph inputs and outputs).
  CutKind cut_kind(int from, int to, const TensorType& type) const;
  double cut_seconds(CutKind kind, double bytes) const { return table_->transfer(kind).seconds(bytes); }

  struct Timeline {
    double total_s = 0;
    std::vector<double> start_s, end_s;  // by node
    std::vector<double> edge_s;          // by node: its island-edge copies (in end_s)
  };
  // Predicts one request for `delegate_of` (index into delegates, by node).
  double latency(const std::vector<int>& delegate_of) const;
  Timeline simulate(const std::vector<int>& delegate_of) const;

 private:
  // Node n's edge copies on host delegate d (see above); marks the values
  // it copies in.
  double edge_seconds(NodeId n, int d, const std::vector<int>& delegate_of) const;

  const Graph& graph_;
  std::vector<Delegate*> delegates_;
  const CostTable* table_;
  std::vector<std::vector<double>> node_s_;  // [delegate][node]
  std::vector<double> island_s_;             // [delegate]
  std::vector<double> edge_s_per_byte_;      // [delegate]: DelegateCosts::edge_gbps, 0 = no edge copies
  std::vector<int> resource_;                // [delegate] → resource id
  std::vector<bool> device_;                 // [delegate] keeps tensors in device memory
  int num_resources_ = 0;
  // Flattened graph for the simulation: inputs of each node (non-constant).
  std::vector<std::vector<ValueId>> node_inputs_;
  std::vector<double> value_bytes_;
  std::vector<std::vector<NodeId>> readers_;  // [value]: the nodes that read it
  std::vector<bool> value_is_output_;         // [value]: a graph output
  // Scratch, reused by every simulation (the model is used by one thread).
  mutable std::vector<double> arrival_;  // [value * (delegates + 1) + place]
  mutable std::vector<double> free_;     // [resource]
  mutable std::vector<uint8_t> copied_in_;  // [value * delegates + delegate]: its edge copy is counted
};

}  // namespace hetsched
