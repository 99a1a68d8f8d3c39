#include "partitioner/partitioner.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "graph/op_schema.h"
#include "partitioner/auto_policy.h"
#include "partitioner/island_builder.h"
#include "partitioner/plan_cost.h"

namespace hetsched {

std::string_view assign_pass_name(AssignPass pass) {
  switch (pass) {
    case AssignPass::kPinned: return "pinned";
    case AssignPass::kPolicy: return "policy";
    case AssignPass::kRetried: return "retried";
    case AssignPass::kPruned: return "pruned";
    case AssignPass::kFallback: return "fallback";
    case AssignPass::kCost: return "cost";
  }
  return "?";
}

namespace {

constexpr std::string_view kCpu = "cpu";

// What the passes share: the graph, the delegates in policy order and every
// delegate's answer for every node.
struct PartitionState {
  const Graph& graph;
  const std::vector<Delegate*>& delegates;
  const PartitionOptions& options;
  std::vector<std::vector<Capability>> caps;  // [delegate][node]
  PartitionPlan plan;
  // Delegate indices in the order placement and pruning follow: the policy's
  // order, or for auto the order its prunes fall back along.
  std::vector<int> order;

  int index_of(std::string_view name) const {
    for (size_t d = 0; d < delegates.size(); ++d)
      if (delegates[d]->name() == name) return static_cast<int>(d);
    return -1;
  }
  NodeId num_nodes() const { return static_cast<NodeId>(graph.num_nodes()); }
  // Position of delegate d in `order`.
  int rank_of(int d) const {
    return static_cast<int>(std::find(order.begin(), order.end(), d) - order.begin());
  }
  // "vgf: Gather is data-dependent; vulkan: ..." for every delegate that refuses n.
  std::string refusals(NodeId n) const {
    std::string why;
    for (size_t d = 0; d < delegates.size(); ++d)
      if (!caps[d][n].supported)
        why += std::string(why.empty() ? "" : "; ") + std::string(delegates[d]->name()) + ": " + caps[d][n].reason;
    return why;
  }
};

// Pass 1 — capability. Every delegate answers for every node, with a reason
// when it refuses. Nothing is decided yet.
void query_capabilities(PartitionState& s) {
  s.caps.assign(s.delegates.size(), {});
  for (size_t d = 0; d < s.delegates.size(); ++d)
    for (NodeId n = 0; n < s.num_nodes(); ++n) s.caps[d].push_back(s.delegates[d]->supports(s.graph, n));
}

// Pass 2 — pins. A node matching a pin (by node name first, then op type)
// goes where the pin says, whatever the policy. Pinning a node to a delegate
// that cannot run it is an error: the user asked for the impossible.
Status apply_pins(PartitionState& s) {
  for (NodeId n = 0; n < s.num_nodes(); ++n) {
    const Node& node = s.graph.node(n);
    const PartitionPin* match = nullptr;
    for (const PartitionPin& pin : s.options.pins)
      if (!pin.node.empty() && pin.node == node.name) match = &pin;
    for (const PartitionPin& pin : s.options.pins)
      if (!match && !pin.op.empty() && pin.op == node.op) match = &pin;
    if (!match) continue;
    const int d = s.index_of(match->delegate);
    if (d < 0)
      return invalid_argument("failed to apply pin for " + s.graph.describe_node(n) + ": delegate '" +
                              match->delegate + "' is not enabled");
    if (!s.caps[d][n].supported)
      return invalid_argument("failed to apply pin: " + s.graph.describe_node(n) + " is pinned to " + match->delegate +
                              ", which cannot run it: " + s.caps[d][n].reason);
    s.plan.nodes[n] = {match->delegate, AssignPass::kPinned,
                       match->node.empty() ? "pinned by op " + match->op : "pinned by node name", -1};
  }
  return Status::ok();
}

// Pass 3 — policy. Every unpinned node goes to the first delegate in policy
// order that supports it. The CPU at the end of a non-CPU-first order is the
// fallback, and is recorded as such.
Status apply_policy(PartitionState& s) {
  for (NodeId n = 0; n < s.num_nodes(); ++n) {
    if (!s.plan.nodes[n].delegate.empty()) continue;
    for (size_t k = 0; k < s.order.size(); ++k) {
      const int d = s.order[k];
      if (!s.caps[d][n].supported) continue;
      const bool fallback = s.delegates[d]->name() == kCpu && k > 0;
      s.plan.nodes[n] = {std::string(s.delegates[d]->name()), fallback ? AssignPass::kFallback : AssignPass::kPolicy,
                         fallback ? "not supported by " + s.refusals(n) : "first in policy " + s.options.policy, -1};
      break;
    }
    if (s.plan.nodes[n].delegate.empty())
      return unsupported("failed to partition: no enabled delegate supports " + s.graph.describe_node(n) + " (" +
                         s.refusals(n) + ")");
  }
  return Status::ok();
}

std::string ms_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  return buf;
}

// Pass 3 (policy auto) — cost. Every unpinned node goes where the plan with
// the least predicted latency puts it (auto_policy.h). With fallback: error
// the CPU takes only nodes no other delegate supports (and pass 5 refuses
// those), as under a fixed order with the CPU last.
Status apply_cost_policy(PartitionState& s, const PlanCostModel& model) {
  const int count = static_cast<int>(s.delegates.size());
  const int cpu = s.index_of(kCpu);
  const bool strict = s.options.fallback == "error";
  AutoSearchInput in;
  in.allowed.assign(count, std::vector<bool>(s.num_nodes(), false));
  in.pinned.assign(s.num_nodes(), -1);
  for (NodeId n = 0; n < s.num_nodes(); ++n) {
    bool elsewhere = false;
    for (int d = 0; d < count; ++d) elsewhere |= d != cpu && s.caps[d][n].supported;
    for (int d = 0; d < count; ++d) in.allowed[d][n] = s.caps[d][n].supported && !(strict && d == cpu && elsewhere);
    if (!s.plan.nodes[n].delegate.empty()) in.pinned[n] = s.index_of(s.plan.nodes[n].delegate);
  }
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  do {
    std::string name;
    for (int d : order) name += (name.empty() ? "" : ">") + std::string(s.delegates[d]->name());
    in.seed_orders.push_back(order);
    in.seed_names.push_back(name);
  } while (std::next_permutation(order.begin(), order.end()));

  in.min_gain = s.options.auto_min_gain;
  AutoSearchResult found = search_assignment(s.graph, model, in);
  s.plan.candidates.clear();
  for (const auto& [name, seconds] : found.candidates) s.plan.candidates.emplace_back(name, seconds * 1e3);
  for (NodeId n = 0; n < s.num_nodes(); ++n) {
    if (!s.plan.nodes[n].delegate.empty()) continue;  // pinned
    const int d = found.delegate_of[n];
    if (d < 0)
      return unsupported("failed to partition: no enabled delegate supports " + s.graph.describe_node(n) + " (" +
                         s.refusals(n) + ")");
    int supporters = 0;
    std::string options;
    for (int e = 0; e < count; ++e) {
      if (!s.caps[e][n].supported) continue;
      supporters++;
      options += (options.empty() ? "" : ", ") + std::string(s.delegates[e]->name()) + " " +
                 ms_text(model.node_seconds(e, n));
    }
    const std::string name(s.delegates[d]->name());
    if (supporters == 1 && d == cpu && count > 1)
      s.plan.nodes[n] = {name, AssignPass::kFallback, "not supported by " + s.refusals(n), -1};
    else
      s.plan.nodes[n] = {name, AssignPass::kCost, "auto: least predicted latency (this node: " + options + ")", -1};
  }
  return Status::ok();
}

// The cost model's view of the final plan: each island's time and start,
// each cut edge's kind and time, the request's latency.
void predict(PartitionState& s, const PlanCostModel& model) {
  std::vector<int> delegate_of(s.num_nodes());
  for (NodeId n = 0; n < s.num_nodes(); ++n) delegate_of[n] = s.index_of(s.plan.nodes[n].delegate);
  const PlanCostModel::Timeline timeline = model.simulate(delegate_of);
  s.plan.predicted_ms = timeline.total_s * 1e3;
  std::vector<int> island_delegate;
  for (PlannedIsland& island : s.plan.islands) {
    const int d = s.index_of(island.delegate);
    island_delegate.push_back(d);
    double seconds = model.island_seconds(d);
    double start = timeline.total_s;
    for (NodeId n : island.nodes) {
      seconds += model.node_seconds(d, n) + timeline.edge_s[n];
      start = std::min(start, timeline.start_s[n]);
    }
    island.predicted_ms = seconds * 1e3;
    island.predicted_start_ms = start * 1e3;
  }
  std::set<std::pair<ValueId, int>> moved;  // (value, destination delegate; -1 host)
  for (CutEdge& edge : s.plan.edges) {
    const int from = edge.from_island < 0 ? -1 : island_delegate[edge.from_island];
    const int to = edge.to_island < 0 ? -1 : island_delegate[edge.to_island];
    edge.kind = model.cut_kind(from, to, s.graph.value(edge.value).type);
    const bool first = moved.insert({edge.value, to}).second;
    edge.predicted_ms = first && edge.kind != CutKind::kAlias
                            ? model.cut_seconds(edge.kind, static_cast<double>(edge.bytes)) * 1e3
                            : 0.0;
  }
}

int count_compute_nodes(const Graph& graph, const std::vector<NodeId>& nodes) {
  int count = 0;
  for (NodeId n : nodes) {
    const OpSchema* schema = find_op_schema(graph.node(n).op);
    if (!schema || schema->is_compute) count++;
  }
  return count;
}

// The delegate a pruned node moves to: with retry_pruned, the next delegate
// after `from` in policy order that supports it (other than the CPU, which is
// the last resort either way); otherwise the CPU.
int next_home(const PartitionState& s, NodeId n, int from) {
  if (s.options.retry_pruned)
    for (size_t k = s.rank_of(from) + 1; k < s.order.size(); ++k) {
      const int d = s.order[k];
      if (s.delegates[d]->name() != kCpu && s.caps[d][n].supported) return d;
    }
  return s.index_of(kCpu);
}

// Pass 4 — islands and pruning. Forms islands; a non-CPU island with fewer
// compute nodes than min_partition_size loses its unpinned nodes to
// next_home(). Moving nodes changes the islands, so this repeats until no
// island is pruned. Each round moves nodes strictly later in policy order, so
// it ends after at most (delegates × nodes) rounds.
Status form_and_prune(PartitionState& s, std::vector<int>& island_of) {
  const size_t max_rounds = s.delegates.size() * (s.graph.num_nodes() + 1);
  for (size_t round = 0;; ++round) {
    std::vector<std::string> delegate_of;
    for (const auto& a : s.plan.nodes) delegate_of.push_back(a.delegate);
    s.plan.islands = form_islands(s.graph, delegate_of, island_of);
    // Prune only the undersized islands of the earliest delegate in policy
    // order this round: their nodes may grow a later delegate's island past
    // the minimum before that one is judged.
    int prune_delegate = -1;
    for (const PlannedIsland& island : s.plan.islands) {
      if (island.delegate == kCpu || count_compute_nodes(s.graph, island.nodes) >= s.options.min_partition_size)
        continue;
      bool movable = false;
      for (NodeId n : island.nodes) movable |= s.plan.nodes[n].pass != AssignPass::kPinned;
      const int d = s.index_of(island.delegate);
      if (movable && (prune_delegate < 0 || s.rank_of(d) < s.rank_of(prune_delegate))) prune_delegate = d;
    }
    const bool pruned_any = prune_delegate >= 0;
    for (const PlannedIsland& island : s.plan.islands) {
      if (s.index_of(island.delegate) != prune_delegate) continue;
      const int compute = count_compute_nodes(s.graph, island.nodes);
      if (compute >= s.options.min_partition_size) continue;
      std::vector<NodeId> movable;
      for (NodeId n : island.nodes)
        if (s.plan.nodes[n].pass != AssignPass::kPinned) movable.push_back(n);
      if (movable.empty()) continue;
      const int from = s.index_of(island.delegate);
      PrunedIsland record{island.delegate, island.nodes, compute, s.options.min_partition_size, ""};
      for (NodeId n : movable) {
        const int to = next_home(s, n, from);
        if (to < 0)
          return unsupported("failed to partition: " + s.graph.describe_node(n) + " was pruned from a " +
                             island.delegate + " island of " + std::to_string(compute) +
                             " compute node(s) (min_partition_size " + std::to_string(s.options.min_partition_size) +
                             ") and the cpu delegate, the fallback, is disabled");
        const std::string to_name(s.delegates[to]->name());
        const std::string why = "pruned from " + island.delegate + " (island of " + std::to_string(compute) +
                                " compute node(s) < min_partition_size " + std::to_string(s.options.min_partition_size) + ")";
        s.plan.nodes[n] = {to_name, to_name == kCpu ? AssignPass::kPruned : AssignPass::kRetried,
                           to_name == kCpu ? why : why + ", retried on " + to_name, -1};
        if (record.went_to.find(to_name) == std::string::npos)
          record.went_to += (record.went_to.empty() ? "" : ", ") + to_name;
      }
      s.plan.pruned.push_back(std::move(record));
    }
    if (!pruned_any) return Status::ok();
    if (round > max_rounds) return internal_error("failed to partition: pruning did not settle");
  }
}

// Pass 5 — strict mode. With fallback: error, a node that ends on the CPU
// although the CPU is not first in the policy is refused, with why every
// other delegate refused it.
Status check_fallback(const PartitionState& s) {
  if (s.options.fallback != "error") return Status::ok();
  std::string nodes;
  int count = 0;
  for (NodeId n = 0; n < s.num_nodes(); ++n) {
    const NodeAssignment& a = s.plan.nodes[n];
    if (a.delegate != kCpu || (a.pass != AssignPass::kFallback && a.pass != AssignPass::kPruned)) continue;
    count++;
    nodes += "\n  " + s.graph.describe_node(n) + ": " + a.reason;
  }
  if (count == 0) return Status::ok();
  return unsupported("partition.fallback is 'error' and " + std::to_string(count) +
                     " node(s) would fall back to the cpu:" + nodes);
}

void record_unsupported(PartitionState& s) {
  for (size_t d = 0; d < s.delegates.size(); ++d) {
    std::map<std::string, std::string> by_op;  // op → first reason
    for (NodeId n = 0; n < s.num_nodes(); ++n)
      if (!s.caps[d][n].supported) by_op.emplace(s.graph.node(n).op, s.caps[d][n].reason);
    std::vector<std::string> lines;
    for (const auto& [op, why] : by_op) lines.push_back(op + ": " + why);
    if (!lines.empty()) s.plan.unsupported.emplace_back(std::string(s.delegates[d]->name()), std::move(lines));
  }
}

}  // namespace

Result<PartitionPlan> partition(const Graph& graph, const std::vector<Delegate*>& delegates,
                                const PartitionOptions& options) {
  if (delegates.empty()) return invalid_argument("failed to partition: no delegate is enabled");
  const bool by_cost = options.policy == "auto";
  if (by_cost && !options.costs)
    return invalid_argument("failed to partition: policy auto needs cost figures (PartitionOptions::costs)");
  PartitionState s{graph, delegates, options, {}, {}, {}};
  s.order.resize(delegates.size());
  std::iota(s.order.begin(), s.order.end(), 0);
  s.plan.policy = options.policy;
  for (Delegate* d : delegates) {
    s.plan.order.emplace_back(d->name());
    if (d->memory_kind() == MemoryDomain::Kind::kDevice) s.plan.device_delegates.emplace_back(d->name());
  }
  s.plan.nodes.resize(graph.num_nodes());

  query_capabilities(s);
  HS_RETURN_IF_ERROR(apply_pins(s));
  std::optional<PlanCostModel> model;
  if (options.costs) {
    model.emplace(graph, delegates, *options.costs);
    s.plan.cost_source = options.costs->source;
  }
  if (by_cost) HS_RETURN_IF_ERROR(apply_cost_policy(s, *model));
  else HS_RETURN_IF_ERROR(apply_policy(s));
  std::vector<int> island_of;
  HS_RETURN_IF_ERROR(form_and_prune(s, island_of));
  HS_RETURN_IF_ERROR(check_fallback(s));
  for (NodeId n = 0; n < s.num_nodes(); ++n) s.plan.nodes[n].island = island_of[n];
  s.plan.edges = connect_islands(graph, s.plan.islands, island_of);
  if (model) predict(s, *model);
  if (by_cost)
    s.plan.policy_note = "auto: the least predicted latency of " + std::to_string(s.plan.candidates.size() - 1) +
                         " delegate orders and a local search from the best";
  record_unsupported(s);
  return std::move(s.plan);
}

}  // namespace hetsched
