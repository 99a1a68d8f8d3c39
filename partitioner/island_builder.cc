#include "partitioner/island_builder.h"

#include <algorithm>
#include <queue>
#include <set>

namespace hetsched {

namespace {

// A set of island ids as bits: island graphs of large models have thousands
// of islands, and these sets are unioned and intersected per node.
class IslandBits {
 public:
  bool test(int i) const {
    const size_t w = static_cast<size_t>(i) / 64;
    return w < words_.size() && (words_[w] >> (i % 64)) & 1;
  }
  void set(int i) {
    const size_t w = static_cast<size_t>(i) / 64;
    if (w >= words_.size()) words_.resize(w + 1, 0);
    words_[w] |= uint64_t{1} << (i % 64);
  }
  // Adds every member of `other`; true when this set grew.
  bool unite(const IslandBits& other) {
    if (other.words_.size() > words_.size()) words_.resize(other.words_.size(), 0);
    bool grew = false;
    for (size_t w = 0; w < other.words_.size(); ++w) {
      const uint64_t before = words_[w];
      words_[w] |= other.words_[w];
      grew |= words_[w] != before;
    }
    return grew;
  }
  // True when this set and `other` share a member other than a and b.
  bool meets_except(const IslandBits& other, int a, int b) const {
    const size_t n = std::min(words_.size(), other.words_.size());
    for (size_t w = 0; w < n; ++w) {
      uint64_t both = words_[w] & other.words_[w];
      for (int x : {a, b})
        if (static_cast<size_t>(x) / 64 == w) both &= ~(uint64_t{1} << (x % 64));
      if (both) return true;
    }
    return false;
  }
  template <typename F>
  void for_each(F f) const {
    for (size_t w = 0; w < words_.size(); ++w)
      for (uint64_t bits = words_[w]; bits; bits &= bits - 1)
        f(static_cast<int>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
  }

 private:
  std::vector<uint64_t> words_;
};

// Island dependency bookkeeping while islands grow: ancestors[i] holds every
// island that must run before island i.
struct IslandSets {
  std::vector<std::string> delegate;
  std::vector<IslandBits> ancestors;
  std::vector<std::vector<NodeId>> nodes;

  int add(const std::string& d) {
    delegate.push_back(d);
    ancestors.emplace_back();
    nodes.emplace_back();
    return static_cast<int>(delegate.size()) - 1;
  }
};

// The islands that directly produce node n's inputs, ascending.
std::vector<int> producer_islands(const Graph& graph, NodeId n, const std::vector<int>& island_of) {
  std::vector<int> out;
  for (ValueId v : graph.node(n).inputs) {
    if (v == kNoValue) continue;
    const NodeId p = graph.value(v).producer;
    if (p != kNoNode) out.push_back(island_of[p]);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Direct successors of every island (ascending, no self edges).
std::vector<std::vector<int>> island_successors(const Graph& graph, const std::vector<int>& island_of, int num_islands) {
  std::vector<std::vector<int>> succ(num_islands);
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    for (int p : producer_islands(graph, n, island_of))
      if (p != island_of[n]) succ[p].push_back(island_of[n]);
  for (auto& s : succ) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  return succ;
}

std::vector<int> topological_island_order(const Graph& graph, const std::vector<int>& island_of, int num_islands) {
  const std::vector<std::vector<int>> succ = island_successors(graph, island_of, num_islands);
  std::vector<int> indegree(num_islands, 0);
  for (const auto& s : succ)
    for (int j : s) indegree[j]++;
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
    const std::vector<std::vector<int>> succ = island_successors(graph, island_of, count);
    // below[i]: islands that depend (transitively) on i; above[i]: those i depends on.
    const std::vector<int> order = topological_island_order(graph, island_of, count);
    std::vector<IslandBits> below(count), above(count);
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      for (int j : succ[*it]) {
        below[*it].set(j);
        below[*it].unite(below[j]);
      }
    for (int i : order)
      for (int j : succ[i]) {
        above[j].set(i);
        above[j].unite(above[i]);
      }
    for (int a = 0; a < count && !merged; ++a) {
      for (int b : succ[a]) {
        if (sets.delegate[a] != sets.delegate[b] || sets.nodes[b].empty()) continue;
        if (below[a].meets_except(above[b], a, b)) continue;  // a path through a third island
        for (NodeId n : sets.nodes[b]) island_of[n] = a;
        sets.nodes[a].insert(sets.nodes[a].end(), sets.nodes[b].begin(), sets.nodes[b].end());
        std::sort(sets.nodes[a].begin(), sets.nodes[a].end());
        sets.nodes[b].clear();
        merged = true;
        break;
      }
    }
    if (!merged) break;
    // Drop the emptied island, keeping creation order.
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
}

}  // namespace

std::vector<PlannedIsland> form_islands(const Graph& graph, const std::vector<std::string>& delegate_of,
                                        std::vector<int>& island_of) {
  const auto num_nodes = static_cast<NodeId>(graph.num_nodes());
  island_of.assign(num_nodes, -1);
  IslandSets sets;
  for (NodeId n = 0; n < num_nodes; ++n) {
    const std::vector<int> producers = producer_islands(graph, n, island_of);
    // Every island n depends on, directly or through others.
    IslandBits deps;
    for (int p : producers) {
      deps.set(p);
      deps.unite(sets.ancestors[p]);
    }
    // n may join producer island I (same delegate) unless some other island
    // n depends on itself depends on I: I → J → n would become a cycle I ↔ J.
    int target = -1;
    for (int candidate : producers) {
      if (sets.delegate[candidate] != delegate_of[n]) continue;
      bool creates_cycle = false;
      deps.for_each([&](int d) { creates_cycle |= d != candidate && sets.ancestors[d].test(candidate); });
      if (!creates_cycle) {
        target = candidate;
        break;
      }
    }
    if (target < 0) target = sets.add(delegate_of[n]);
    island_of[n] = target;
    sets.nodes[target].push_back(n);
    bool grew = false;
    deps.for_each([&](int d) {
      if (d == target) return;
      if (!sets.ancestors[target].test(d)) {
        sets.ancestors[target].set(d);
        grew = true;
      }
    });
    if (grew) {
      // Islands downstream of `target` inherit its new ancestors.
      for (size_t i = 0; i < sets.ancestors.size(); ++i)
        if (static_cast<int>(i) != target && sets.ancestors[i].test(target)) sets.ancestors[i].unite(sets.ancestors[target]);
    }
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
  // Readers of every value, in one pass (Graph::consumers scans all nodes).
  std::vector<std::vector<NodeId>> readers(graph.num_values());
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    for (ValueId v : graph.node(n).inputs)
      if (v != kNoValue) readers[v].push_back(n);
  for (ValueId v : graph.inputs()) {
    std::set<int> to;
    for (NodeId c : readers[v]) to.insert(island_of[c]);
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
        for (NodeId c : readers[v])
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
