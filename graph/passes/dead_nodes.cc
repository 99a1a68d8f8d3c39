#include "graph/passes/dead_nodes.h"

#include <vector>

namespace hetsched {

Result<int> remove_dead_nodes(Graph& graph) {
  std::vector<bool> live_value(graph.num_values(), false);
  for (ValueId v : graph.outputs()) live_value[static_cast<size_t>(v)] = true;
  std::vector<bool> keep(graph.num_nodes(), false);
  int removed = 0;
  // Nodes are in topological order, so one backward sweep sees every reader
  // of a value before the value's writer.
  for (NodeId id = static_cast<NodeId>(graph.num_nodes()); id-- > 0;) {
    const Node& node = graph.node(id);
    for (ValueId out : node.outputs) keep[static_cast<size_t>(id)] = keep[static_cast<size_t>(id)] || live_value[out];
    if (!keep[static_cast<size_t>(id)]) {
      ++removed;
      continue;
    }
    for (ValueId in : node.inputs)
      if (in != kNoValue) live_value[static_cast<size_t>(in)] = true;
  }
  graph.compact(keep);
  return removed;
}

}  // namespace hetsched
