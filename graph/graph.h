// The graph IR: Values (tensors) produced and consumed by Nodes (ops).
//
// A Graph owns its values and nodes in flat vectors addressed by ids. Nodes
// are kept in a topological order: every node's inputs are graph inputs,
// constants, or outputs of earlier nodes (validate() checks this). Ops and
// attributes follow ONNX operator semantics; see op_schema.h for the op set.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

using ValueId = int32_t;
using NodeId = int32_t;
// An omitted optional input (ONNX's empty input name).
inline constexpr ValueId kNoValue = -1;
inline constexpr NodeId kNoNode = -1;

struct Value {
  std::string name;
  TensorType type;                         // filled by shape inference for node outputs
  bool type_known = false;                 // false until inferred (or given, for inputs and constants)
  std::shared_ptr<const Tensor> constant;  // set for initializers / constants
  NodeId producer = kNoNode;               // node that writes it; kNoNode for inputs and constants
  bool is_constant() const { return constant != nullptr; }
};

struct Node {
  std::string name;
  std::string op;  // ONNX op type, e.g. "Conv"
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attributes attrs;
};

class Graph {
 public:
  Graph() = default;
  explicit Graph(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // ONNX default-domain opset the graph was written for; attribute forms depend on it.
  int opset() const { return opset_; }
  void set_opset(int opset) { opset_ = opset; }

  // --- construction ---------------------------------------------------------
  ValueId add_input(std::string name, TensorType type);
  ValueId add_constant(std::string name, Tensor tensor);
  ValueId add_constant(std::string name, std::shared_ptr<const Tensor> tensor);
  // Adds a node whose outputs are new values named `output_names`; their
  // types are unknown until infer_shapes() runs.
  NodeId add_node(std::string op, std::string name, std::vector<ValueId> inputs,
                  std::vector<std::string> output_names, Attributes attrs = {});
  void add_output(ValueId value) { outputs_.push_back(value); }
  // A fresh value name with the given stem ("x", "x_1", ...).
  std::string unique_value_name(const std::string& stem) const;
  std::string unique_node_name(const std::string& stem) const;

  // --- access ----------------------------------------------------------------
  size_t num_values() const { return values_.size(); }
  size_t num_nodes() const { return nodes_.size(); }
  const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
  Value& value(ValueId id) { return values_.at(static_cast<size_t>(id)); }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  Node& node(NodeId id) { return nodes_.at(static_cast<size_t>(id)); }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::vector<ValueId>& mutable_outputs() { return outputs_; }
  // kNoValue when absent.
  ValueId find_value(const std::string& name) const;
  NodeId find_node(const std::string& name) const;
  // Nodes reading `value`, in node order.
  std::vector<NodeId> consumers(ValueId value) const;
  // Whether `value` is one of the graph's outputs.
  bool is_output(ValueId value) const { return std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end(); }

  // --- checks -----------------------------------------------------------------
  // Structure: ids in range, nodes in topological order, every value written
  // once, names unique, outputs produced. Does not look at types.
  Status validate() const;
  // Human label "node 'conv1' (Conv)".
  std::string describe_node(NodeId id) const;

  // Removes nodes for which keep[id] is false and values nothing refers to
  // any more. Ids are renumbered; returns the old→new node id map.
  std::vector<NodeId> compact(const std::vector<bool>& keep_node);

 private:
  std::string name_;
  int opset_ = 17;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::map<std::string, ValueId> value_by_name_;
};

}  // namespace hetsched
