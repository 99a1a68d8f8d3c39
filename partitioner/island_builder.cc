#include "partitioner/island_builder.h"

#include <algorithm>
#include <queue>
#include <set>

namespace hetsched {

namespace {

// Island dependency bookkeeping while islands grow: ancestors[i] holds every
// island that must run before island i.
struct IslandSets {
  std::vector<std::string> delegate;
  std::vector<std::set<int>> ancestors;
  std::vector<std::vector<NodeId>> nodes;

  int add(const std::string& d) {
    delegate.push_back(d);
    ancestors.emplace_back();
    nodes.emplace_back();
    return static_cast<int>(delegate.size()) - 1;
  }
};

// The islands that directly produce node n's inputs.
std::set<int> producer_islands(const Graph& graph, NodeId n, const std::vector<int>& island_of) {
  std::set<int> out;
  for (ValueId v : graph.node(n).inputs) {
    if (v == kNoValue) continue;
    const NodeId p = graph.value(v).producer;
    if (p != kNoNode) out.insert(island_of[p]);
  }
  return out;
}

std::vector<int> topological_island_order(const Graph& graph, const std::vector<int>& island_of, int num_islands) {
  std::vector<std::set<int>> succ(num_islands);
  std::vector<int> indegree(num_islands, 0);
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    for (int p : producer_islands(graph, n, island_of))
      if (p != island_of[n] && succ[p].insert(island_of[n]).second) indegree[island_of[n]]++;
  // Lowest id first among the ready ones: islands keep their creation order
  // whenever the dependencies allow it, so plans are stable.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < num_islands; ++i)
    if (indegree[i] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : succ[i])
      if (--indegree[s] == 0) ready.push(s);
  }
  return order;  // shorter than num_islands only if there is a cycle
}

// The greedy pass leaves siblings apart: two nodes reading one producer on
// another delegate each start an island, even when a later node joins them
// (sin and cos of the RFC model, multiplied together). Merge any two islands
// of one delegate joined by an edge, unless a path between them leaves
// through a third island (then the merged island would wait for itself).
void merge_connected_islands(const Graph& graph, IslandSets& sets, std::vector<int>& island_of) {
  for (bool merged = true; merged;) {
    merged = false;
    const int count = static_cast<int>(sets.delegate.size());
    // reach[i][j]: island j depends (transitively) on island i.
    std::vector<std::vector<bool>> direct(count, std::vector<bool>(count, false));
    for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
      for (int p : producer_islands(graph, n, island_of))
        if (p != island_of[n]) direct[p][island_of[n]] = true;
    std::vector<std::vector<bool>> reach = direct;
    for (int k = 0; k < count; ++k)
      for (int i = 0; i < count; ++i)
        if (reach[i][k])
          for (int j = 0; j < count; ++j)
            if (reach[k][j]) reach[i][j] = true;
    for (int a = 0; a < count && !merged; ++a) {
      for (int b = 0; b < count && !merged; ++b) {
        if (a == b || !direct[a][b] || sets.delegate[a] != sets.delegate[b] || sets.nodes[b].empty()) continue;
        bool through_other = false;
        for (int k = 0; k < count; ++k)
          if (k != a && k != b && reach[a][k] && reach[k][b]) through_other = true;
        if (through_other) continue;
        for (NodeId n : sets.nodes[b]) island_of[n] = a;
        sets.nodes[a].insert(sets.nodes[a].end(), sets.nodes[b].begin(), sets.nodes[b].end());
        std::sort(sets.nodes[a].begin(), sets.nodes[a].end());
        sets.nodes[b].clear();
        merged = true;
      }
    }
  }
  // Drop the emptied islands, keeping creation order.
  std::vector<int> remap(sets.delegate.size(), -1);
  IslandSets kept;
  for (size_t i = 0; i < sets.delegate.size(); ++i) {
    if (sets.nodes[i].empty()) continue;
    remap[i] = kept.add(sets.delegate[i]);
    kept.nodes[remap[i]] = std::move(sets.nodes[i]);
  }
  for (int& i : island_of) i = remap[i];
  sets = std::move(kept);
}

}  // namespace

std::vector<PlannedIsland> form_islands(const Graph& graph, const std::vector<std::string>& delegate_of,
                                        std::vector<int>& island_of) {
  const auto num_nodes = static_cast<NodeId>(graph.num_nodes());
  island_of.assign(num_nodes, -1);
  IslandSets sets;
  for (NodeId n = 0; n < num_nodes; ++n) {
    const std::set<int> producers = producer_islands(graph, n, island_of);
    // Every island n depends on, directly or through others.
    std::set<int> deps;
    for (int p : producers) {
      deps.insert(p);
      deps.insert(sets.ancestors[p].begin(), sets.ancestors[p].end());
    }
    // n may join producer island I (same delegate) unless some other island
    // n depends on itself depends on I: I → J → n would become a cycle I ↔ J.
    int target = -1;
    for (int candidate : producers) {
      if (sets.delegate[candidate] != delegate_of[n]) continue;
      bool creates_cycle = false;
      for (int d : deps)
        if (d != candidate && sets.ancestors[d].count(candidate)) creates_cycle = true;
      if (!creates_cycle) {
        target = candidate;
        break;
      }
    }
    if (target < 0) target = sets.add(delegate_of[n]);
    island_of[n] = target;
    sets.nodes[target].push_back(n);
    for (int d : deps)
      if (d != target) sets.ancestors[target].insert(d);
    // Islands downstream of `target` inherit its new ancestors.
    for (size_t i = 0; i < sets.ancestors.size(); ++i)
      if (sets.ancestors[i].count(target))
        sets.ancestors[i].insert(sets.ancestors[target].begin(), sets.ancestors[target].end());
  }

  merge_connected_islands(graph, sets, island_of);
  const int num_islands = static_cast<int>(sets.delegate.size());
  const std::vector<int> order = topological_island_order(graph, island_of, num_islands);
  std::vector<int> new_id(num_islands, -1);
  for (size_t k = 0; k < order.size(); ++k) new_id[order[k]] = static_cast<int>(k);
  std::vector<PlannedIsland> islands(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    islands[k].id = static_cast<int>(k);
    islands[k].delegate = sets.delegate[order[k]];
    islands[k].nodes = sets.nodes[order[k]];
  }
  for (int& i : island_of) i = new_id[i];
  return islands;
}

std::vector<CutEdge> connect_islands(const Graph& graph, std::vector<PlannedIsland>& islands,
                                     const std::vector<int>& island_of) {
  std::vector<CutEdge> edges;
  const std::set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  for (ValueId v : graph.inputs()) {
    std::set<int> to;
    for (NodeId c : graph.consumers(v)) to.insert(island_of[c]);
    for (int t : to) edges.push_back({v, -1, t, graph.value(v).type.byte_size()});
  }
  for (PlannedIsland& island : islands) {
    std::set<ValueId> seen;
    for (NodeId n : island.nodes) {
      for (ValueId v : graph.node(n).inputs) {
        if (v == kNoValue || graph.value(v).is_constant()) continue;
        const NodeId p = graph.value(v).producer;
        if ((p == kNoNode || island_of[p] != island.id) && seen.insert(v).second) island.inputs.push_back(v);
      }
      for (ValueId v : graph.node(n).outputs) {
        std::set<int> to;
        for (NodeId c : graph.consumers(v))
          if (island_of[c] != island.id) to.insert(island_of[c]);
        const bool is_output = graph_outputs.count(v) > 0;
        if (to.empty() && !is_output) continue;
        island.outputs.push_back(v);
        for (int t : to) edges.push_back({v, island.id, t, graph.value(v).type.byte_size()});
        if (is_output) edges.push_back({v, island.id, -1, graph.value(v).type.byte_size()});
      }
    }
    island.input_bytes = island.output_bytes = 0;
    for (ValueId v : island.inputs) island.input_bytes += graph.value(v).type.byte_size();
    for (ValueId v : island.outputs) island.output_bytes += graph.value(v).type.byte_size();
  }
  // Host → island edges first, then in producer order: the order handoffs run.
  std::stable_sort(edges.begin(), edges.end(), [](const CutEdge& a, const CutEdge& b) {
    return a.from_island < b.from_island;
  });
  return edges;
}

bool island_graph_is_acyclic(const Graph& graph, const std::vector<int>& island_of, int num_islands) {
  return static_cast<int>(topological_island_order(graph, island_of, num_islands).size()) == num_islands;
}

}  // namespace hetsched
