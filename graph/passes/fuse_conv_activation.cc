#include "graph/passes/fuse_conv_activation.h"

#include <optional>
#include <vector>

#include "graph/passes/fused_activation.h"
#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

using Kind = FusedActivation::Kind;

// Reads Clip's bound from input i when it is given (an omitted one keeps its default)
// as an f32 scalar constant; false when it is computed at run time.
bool constant_bound(const Graph& graph, const Node& node, size_t i, float& bound) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return true;
  const Value& v = graph.value(node.inputs[i]);
  if (!v.is_constant() || v.constant->dtype() != DType::kFloat32 || v.constant->num_elements() != 1) return false;
  bound = v.constant->data<float>()[0];
  return true;
}

// The activation `node` computes, if it is one the Conv can carry.
Result<std::optional<FusedActivation>> activation_of(const Graph& graph, const Node& node) {
  FusedActivation a;
  const Attributes& attrs = node.attrs;
  if (node.op == "Relu") {
    a.kind = Kind::kRelu;
  } else if (node.op == "Sigmoid") {
    a.kind = Kind::kSigmoid;
  } else if (node.op == "HardSwish") {
    a.kind = Kind::kHardSwish;
  } else if (node.op == "HardSigmoid") {
    a.kind = Kind::kHardSigmoid;
    HS_ASSIGN_OR_RETURN(a.alpha, attrs.get_float("alpha", 0.2f));
    HS_ASSIGN_OR_RETURN(a.beta, attrs.get_float("beta", 0.5f));
  } else if (node.op == "LeakyRelu") {
    a.kind = Kind::kLeakyRelu;
    HS_ASSIGN_OR_RETURN(a.alpha, attrs.get_float("alpha", 0.01f));
  } else if (node.op == "Clip") {
    a.kind = Kind::kClip;
    if (graph.opset() <= 10) {
      HS_ASSIGN_OR_RETURN(a.min, attrs.get_float("min", a.min));
      HS_ASSIGN_OR_RETURN(a.max, attrs.get_float("max", a.max));
    } else if (!constant_bound(graph, node, 1, a.min) || !constant_bound(graph, node, 2, a.max)) {
      return std::optional<FusedActivation>();
    }
  } else {
    return std::optional<FusedActivation>();
  }
  return std::optional<FusedActivation>(a);
}

}  // namespace

Result<int> fuse_conv_activation(Graph& graph) {
  std::vector<bool> keep(graph.num_nodes(), true);
  int fused = 0;
  for (NodeId act_id = 0; act_id < static_cast<NodeId>(graph.num_nodes()); ++act_id) {
    const Node& act = graph.node(act_id);
    if (act.inputs.empty() || act.inputs[0] == kNoValue || act.outputs.size() != 1) continue;
    const ValueId x = act.inputs[0];
    const NodeId conv_id = graph.value(x).producer;
    if (conv_id == kNoNode || graph.node(conv_id).op != "Conv" || graph.node(conv_id).attrs.has(kActivationAttr) ||
        passes::single_consumer(graph, x) != act_id)
      continue;
    Result<std::optional<FusedActivation>> activation = activation_of(graph, act);
    if (!activation.is_ok()) return activation.status().with_context(graph.describe_node(act_id) + ": ");
    if (!activation->has_value()) continue;
    if (graph.value(x).type_known && graph.value(x).type.dtype != DType::kFloat32) continue;
    write_fused_activation(**activation, graph.node(conv_id).attrs);
    passes::take_over_output(graph, conv_id, 0, act.outputs[0]);
    keep[static_cast<size_t>(act_id)] = false;
    ++fused;
  }
  if (fused > 0) graph.compact(keep);
  return fused;
}

}  // namespace hetsched
