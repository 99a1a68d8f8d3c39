#include "graph/graph.h"

#include <set>

namespace hetsched {

namespace {
ValueId push_value(std::vector<Value>& values, std::map<std::string, ValueId>& by_name, Value v) {
  ValueId id = static_cast<ValueId>(values.size());
  by_name.emplace(v.name, id);
  values.push_back(std::move(v));
  return id;
}
}  // namespace

ValueId Graph::add_input(std::string name, TensorType type) {
  Value v{std::move(name), std::move(type), true, nullptr, kNoNode};
  ValueId id = push_value(values_, value_by_name_, std::move(v));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, Tensor tensor) {
  return add_constant(std::move(name), std::make_shared<const Tensor>(std::move(tensor)));
}

ValueId Graph::add_constant(std::string name, std::shared_ptr<const Tensor> tensor) {
  Value v{std::move(name), tensor->type(), true, std::move(tensor), kNoNode};
  return push_value(values_, value_by_name_, std::move(v));
}

NodeId Graph::add_node(std::string op, std::string name, std::vector<ValueId> inputs,
                       std::vector<std::string> output_names, Attributes attrs) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  Node n{std::move(name), std::move(op), std::move(inputs), {}, std::move(attrs)};
  for (auto& out : output_names) {
    Value v{std::move(out), {}, false, nullptr, id};
    n.outputs.push_back(push_value(values_, value_by_name_, std::move(v)));
  }
  nodes_.push_back(std::move(n));
  return id;
}

std::string Graph::unique_value_name(const std::string& stem) const {
  if (!value_by_name_.count(stem)) return stem;
  for (int i = 1;; ++i) {
    std::string s = stem + "_" + std::to_string(i);
    if (!value_by_name_.count(s)) return s;
  }
}

std::string Graph::unique_node_name(const std::string& stem) const {
  std::set<std::string> names;
  for (const auto& n : nodes_) names.insert(n.name);
  for (int i = 0;; ++i) {
    std::string s = stem + "_" + std::to_string(i);
    if (!names.count(s)) return s;
  }
}

ValueId Graph::find_value(const std::string& name) const {
  auto it = value_by_name_.find(name);
  return it == value_by_name_.end() ? kNoValue : it->second;
}

NodeId Graph::find_node(const std::string& name) const {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].name == name) return static_cast<NodeId>(i);
  return kNoNode;
}

std::vector<NodeId> Graph::consumers(ValueId value) const {
  std::vector<NodeId> out;
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (ValueId in : nodes_[i].inputs)
      if (in == value) {
        out.push_back(static_cast<NodeId>(i));
        break;
      }
  return out;
}

std::string Graph::describe_node(NodeId id) const {
  const Node& n = node(id);
  return "node '" + n.name + "' (" + n.op + ")";
}

Status Graph::validate() const {
  const auto nvalues = static_cast<ValueId>(values_.size());
  std::vector<bool> defined(values_.size(), false);
  std::set<std::string> names;
  for (ValueId v = 0; v < nvalues; ++v) {
    if (!names.insert(values_[v].name).second)
      return invalid_argument("graph '" + name_ + "': value name '" + values_[v].name + "' is used twice");
    if (values_[v].is_constant()) defined[v] = true;
  }
  for (ValueId in : inputs_) {
    if (in < 0 || in >= nvalues) return invalid_argument("graph '" + name_ + "': input id out of range");
    if (values_[in].is_constant())
      return invalid_argument("graph '" + name_ + "': input '" + values_[in].name + "' is also a constant");
    defined[in] = true;
  }
  std::set<std::string> node_names;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    const std::string where = describe_node(static_cast<NodeId>(i));
    if (n.name.empty()) return invalid_argument("graph '" + name_ + "': node " + std::to_string(i) + " has no name");
    if (!node_names.insert(n.name).second) return invalid_argument(where + ": node name is used twice");
    for (ValueId in : n.inputs) {
      if (in == kNoValue) continue;
      if (in < 0 || in >= nvalues) return invalid_argument(where + ": input id out of range");
      if (!defined[in])
        return invalid_argument(where + ": input '" + values_[in].name +
                                "' is not a graph input, a constant or the output of an earlier node");
    }
    if (n.outputs.empty()) return invalid_argument(where + ": node has no outputs");
    for (ValueId out : n.outputs) {
      if (out < 0 || out >= nvalues) return invalid_argument(where + ": output id out of range");
      if (defined[out]) return invalid_argument(where + ": output '" + values_[out].name + "' is written twice");
      if (values_[out].producer != static_cast<NodeId>(i))
        return invalid_argument(where + ": output '" + values_[out].name + "' records another producer");
      defined[out] = true;
    }
  }
  if (outputs_.empty()) return invalid_argument("graph '" + name_ + "' has no outputs");
  for (ValueId out : outputs_) {
    if (out < 0 || out >= nvalues) return invalid_argument("graph '" + name_ + "': output id out of range");
    if (!defined[out]) return invalid_argument("graph '" + name_ + "': output '" + values_[out].name + "' is never written");
  }
  return Status::ok();
}

std::vector<NodeId> Graph::compact(const std::vector<bool>& keep_node) {
  // Values stay referenced if a kept node reads or writes them, or the graph
  // exposes them.
  std::vector<bool> keep_value(values_.size(), false);
  for (ValueId v : inputs_) keep_value[v] = true;
  for (ValueId v : outputs_) keep_value[v] = true;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!keep_node[i]) continue;
    for (ValueId v : nodes_[i].inputs)
      if (v != kNoValue) keep_value[v] = true;
    for (ValueId v : nodes_[i].outputs) keep_value[v] = true;
  }
  std::vector<ValueId> value_map(values_.size(), kNoValue);
  std::vector<Value> new_values;
  for (size_t v = 0; v < values_.size(); ++v) {
    if (!keep_value[v]) continue;
    value_map[v] = static_cast<ValueId>(new_values.size());
    new_values.push_back(std::move(values_[v]));
  }
  std::vector<NodeId> node_map(nodes_.size(), kNoNode);
  std::vector<Node> new_nodes;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!keep_node[i]) continue;
    node_map[i] = static_cast<NodeId>(new_nodes.size());
    Node n = std::move(nodes_[i]);
    for (ValueId& v : n.inputs)
      if (v != kNoValue) v = value_map[v];
    for (ValueId& v : n.outputs) v = value_map[v];
    new_nodes.push_back(std::move(n));
  }
  for (Value& v : new_values)
    if (v.producer != kNoNode) v.producer = node_map[v.producer];
  for (ValueId& v : inputs_) v = value_map[v];
  for (ValueId& v : outputs_) v = value_map[v];
  values_ = std::move(new_values);
  nodes_ = std::move(new_nodes);
  value_by_name_.clear();
  for (size_t v = 0; v < values_.size(); ++v) value_by_name_.emplace(values_[v].name, static_cast<ValueId>(v));
  return node_map;
}

}  // namespace hetsched
