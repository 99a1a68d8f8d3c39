#include "partitioner/partitioner.h"

#include <map>
#include <set>

namespace hetsched {

std::string_view assign_pass_name(AssignPass pass) {
  switch (pass) {
    case AssignPass::kPinned: return "pinned";
    case AssignPass::kPolicy: return "policy";
    case AssignPass::kRetried: return "retried";
    case AssignPass::kPruned: return "pruned";
    case AssignPass::kFallback: return "fallback";
  }
  return "?";
}

PartitionOptions partition_options_from(const Profile& profile) {
  PartitionOptions o;
  o.policy = profile.partition.prefer;
  o.min_partition_size = profile.partition.min_partition_size;
  o.retry_pruned = profile.partition.retry_pruned;
  o.pins = profile.partition.pins;
  o.fallback = profile.partition.fallback;
  return o;
}

namespace {

using CapabilityTable = std::vector<std::vector<Capability>>;  // [delegate][node]

// Pass 1: every delegate answers for every node.
CapabilityTable query_capabilities(const Graph& graph, const std::vector<Delegate*>& delegates) {
  CapabilityTable caps(delegates.size());
  for (size_t d = 0; d < delegates.size(); ++d)
    for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
      caps[d].push_back(delegates[d]->supports(graph, n));
  return caps;
}

int delegate_index(const std::vector<Delegate*>& delegates, std::string_view name) {
  for (size_t d = 0; d < delegates.size(); ++d)
    if (delegates[d]->name() == name) return static_cast<int>(d);
  return -1;
}

// Pass 2: pins override everything. A pin to a delegate that cannot run the
// node is an error: the user asked for something impossible.
Status apply_pins(const Graph& graph, const std::vector<Delegate*>& delegates, const CapabilityTable& caps,
                  const std::vector<PinRule>& pins, std::vector<NodeAssignment>& out) {
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    const Node& node = graph.node(n);
    for (const PinRule& pin : pins) {
      const bool match = (!pin.op.empty() && pin.op == node.op) || (!pin.node.empty() && pin.node == node.name);
      if (!match) continue;
      const int d = delegate_index(delegates, pin.delegate);
      if (d < 0) return invalid_argument("failed to apply pin: delegate '" + pin.delegate + "' is not enabled");
      if (!caps[d][n].supported)
        return invalid_argument("failed to apply pin: " + graph.describe_node(n) + " is pinned to " + pin.delegate +
                                ", which cannot run it: " + caps[d][n].reason);
      out[n] = {pin.delegate, AssignPass::kPinned,
                pin.op.empty() ? "pinned by node name" : "pinned by op " + pin.op, -1};
      break;
    }
  }
  return Status::ok();
}

// Pass 3: first supporting delegate in policy order.
Status apply_policy(const Graph& graph, const std::vector<Delegate*>& delegates, const CapabilityTable& caps,
                    const PartitionOptions& options, std::vector<NodeAssignment>& out) {
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    if (!out[n].delegate.empty()) continue;
    for (size_t d = 0; d < delegates.size(); ++d) {
      if (!caps[d][n].supported) continue;
      const bool is_cpu = delegates[d]->name() == "cpu";
      const bool cpu_is_fallback = is_cpu && d == delegates.size() - 1 && d > 0;
      out[n] = {std::string(delegates[d]->name()), cpu_is_fallback ? AssignPass::kFallback : AssignPass::kPolicy,
                cpu_is_fallback ? "no earlier delegate supports it" : "first in policy " + options.policy, -1};
      break;
    }
    if (out[n].delegate.empty()) {
      std::string why;
      for (size_t d = 0; d < delegates.size(); ++d)
        why += std::string(why.empty() ? "" : "; ") + std::string(delegates[d]->name()) + ": " + caps[d][n].reason;
      return unsupported("failed to partition: no enabled delegate supports " + graph.describe_node(n) + " (" + why +
                         ")");
    }
  }
  return Status::ok();
}

// Pass 4: islands are maximal runs of consecutive nodes (in topological
// order) on one delegate. Contracting consecutive runs of a topological order
// can never create a cycle.
void form_islands(const Graph& graph, std::vector<NodeAssignment>& nodes, std::vector<PlannedIsland>& islands) {
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    if (islands.empty() || islands.back().delegate != nodes[n].delegate) {
      PlannedIsland island;
      island.id = static_cast<int>(islands.size());
      island.delegate = nodes[n].delegate;
      islands.push_back(std::move(island));
    }
    islands.back().nodes.push_back(n);
    nodes[n].island = islands.back().id;
  }
}

// Pass 5: island inputs/outputs and the cut edges with their bytes.
void find_edges(const Graph& graph, std::vector<PlannedIsland>& islands, std::vector<CutEdge>& edges,
                const std::vector<NodeAssignment>& nodes) {
  std::set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  for (ValueId v : graph.inputs()) {
    for (NodeId c : graph.consumers(v))
      edges.push_back({v, -1, nodes[c].island, graph.value(v).type.byte_size()});
  }
  for (PlannedIsland& island : islands) {
    std::set<ValueId> seen_in;
    for (NodeId n : island.nodes) {
      for (ValueId v : graph.node(n).inputs) {
        if (v == kNoValue || graph.value(v).is_constant()) continue;
        const NodeId p = graph.value(v).producer;
        if ((p == kNoNode || nodes[p].island != island.id) && seen_in.insert(v).second) island.inputs.push_back(v);
      }
      for (ValueId v : graph.node(n).outputs) {
        bool leaves = graph_outputs.count(v) > 0;
        std::set<int> to;
        for (NodeId c : graph.consumers(v))
          if (nodes[c].island != island.id) {
            leaves = true;
            to.insert(nodes[c].island);
          }
        if (!leaves) continue;
        island.outputs.push_back(v);
        for (int t : to) edges.push_back({v, island.id, t, graph.value(v).type.byte_size()});
        if (graph_outputs.count(v)) edges.push_back({v, island.id, -1, graph.value(v).type.byte_size()});
      }
    }
    for (ValueId v : island.inputs) island.input_bytes += graph.value(v).type.byte_size();
    for (ValueId v : island.outputs) island.output_bytes += graph.value(v).type.byte_size();
  }
}

void record_unsupported(const Graph& graph, const std::vector<Delegate*>& delegates, const CapabilityTable& caps,
                        PartitionPlan& plan) {
  for (size_t d = 0; d < delegates.size(); ++d) {
    std::map<std::string, std::string> by_op;  // op → first reason
    for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
      if (!caps[d][n].supported) by_op.emplace(graph.node(n).op, caps[d][n].reason);
    std::vector<std::string> lines;
    for (const auto& [op, why] : by_op) lines.push_back(op + ": " + why);
    if (!lines.empty()) plan.unsupported.emplace_back(std::string(delegates[d]->name()), std::move(lines));
  }
}

}  // namespace

Result<PartitionPlan> partition(const Graph& graph, const std::vector<Delegate*>& delegates,
                                const PartitionOptions& options) {
  if (delegates.empty()) return invalid_argument("failed to partition: no delegate is enabled");
  PartitionPlan plan;
  plan.policy = options.policy;
  if (options.policy == "auto") plan.policy_note = "auto = vgf_first until the cost-based policy lands";
  for (Delegate* d : delegates) plan.order.emplace_back(d->name());
  plan.nodes.resize(graph.num_nodes());

  const CapabilityTable caps = query_capabilities(graph, delegates);
  HS_RETURN_IF_ERROR(apply_pins(graph, delegates, caps, options.pins, plan.nodes));
  HS_RETURN_IF_ERROR(apply_policy(graph, delegates, caps, options, plan.nodes));
  form_islands(graph, plan.nodes, plan.islands);
  find_edges(graph, plan.islands, plan.edges, plan.nodes);
  record_unsupported(graph, delegates, caps, plan);
  return plan;
}

}  // namespace hetsched
