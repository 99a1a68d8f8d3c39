#include "graph/subgraph.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace hetsched {

namespace {

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "extract_subgraph: %s\n", what.c_str());
  std::abort();
}

}  // namespace

Graph extract_subgraph(const Graph& graph, std::span<const NodeId> nodes, std::span<const ValueId> inputs,
                       std::span<const ValueId> outputs) {
  auto valid_value = [&](ValueId v) { return v >= 0 && static_cast<size_t>(v) < graph.num_values(); };
  Graph sub(graph.name());
  sub.set_opset(graph.opset());
  // Old value id → new value id; kNoValue where the sub-graph has no copy yet.
  std::vector<ValueId> map(graph.num_values(), kNoValue);

  for (ValueId in : inputs) {
    check(valid_value(in), "input id " + std::to_string(in) + " is out of range");
    check(map[in] == kNoValue, "input '" + graph.value(in).name + "' is listed twice");
    const Value& v = graph.value(in);
    map[in] = sub.add_input(v.name, v.type);
    sub.value(map[in]).type_known = v.type_known;
  }

  for (NodeId id : nodes) {
    check(id >= 0 && static_cast<size_t>(id) < graph.num_nodes(), "node id " + std::to_string(id) + " is out of range");
    const Node& n = graph.node(id);
    std::vector<ValueId> node_inputs;
    node_inputs.reserve(n.inputs.size());
    for (ValueId in : n.inputs) {
      if (in == kNoValue) {
        node_inputs.push_back(kNoValue);
        continue;
      }
      check(valid_value(in), graph.describe_node(id) + ": input id " + std::to_string(in) + " is out of range");
      if (map[in] == kNoValue) {
        const Value& v = graph.value(in);
        check(v.is_constant(), graph.describe_node(id) + ": input '" + v.name +
                                   "' is neither a sub-graph input, a constant, nor written by an earlier node");
        map[in] = sub.add_constant(v.name, v.constant);
        Value& copy = sub.value(map[in]);
        copy.type = v.type;
        copy.type_known = v.type_known;
      }
      node_inputs.push_back(map[in]);
    }
    std::vector<std::string> output_names;
    for (ValueId out : n.outputs) output_names.push_back(graph.value(out).name);
    NodeId added = sub.add_node(n.op, n.name, std::move(node_inputs), std::move(output_names), n.attrs);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Value& v = graph.value(n.outputs[i]);
      check(map[n.outputs[i]] == kNoValue, graph.describe_node(id) + ": output '" + v.name + "' is already defined");
      ValueId copy = sub.node(added).outputs[i];
      map[n.outputs[i]] = copy;
      sub.value(copy).type = v.type;
      sub.value(copy).type_known = v.type_known;
    }
  }

  for (ValueId out : outputs) {
    check(valid_value(out), "output id " + std::to_string(out) + " is out of range");
    check(map[out] != kNoValue, "output '" + graph.value(out).name + "' is not written by the sub-graph's nodes");
    sub.add_output(map[out]);
  }
  return sub;
}

}  // namespace hetsched
