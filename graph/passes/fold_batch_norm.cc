#include "graph/passes/fold_batch_norm.h"

#include <cmath>
#include <vector>

#include "graph/passes/fused_activation.h"
#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

// The f32 constant behind `value` with `count` elements, or nullptr.
const Tensor* f32_constant(const Graph& graph, ValueId value, int64_t count) {
  if (value == kNoValue) return nullptr;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->dtype() != DType::kFloat32) return nullptr;
  if (count >= 0 && v.constant->num_elements() != count) return nullptr;
  return v.constant.get();
}

}  // namespace

Result<int> fold_batch_norm_into_conv(Graph& graph) {
  std::vector<bool> keep(graph.num_nodes(), true);
  int folded = 0;
  for (NodeId bn_id = 0; bn_id < static_cast<NodeId>(graph.num_nodes()); ++bn_id) {
    const Node& bn = graph.node(bn_id);
    if (bn.op != "BatchNormalization" || bn.inputs.size() != 5 || bn.outputs.size() != 1) continue;
    const ValueId x = bn.inputs[0];
    const NodeId conv_id = graph.value(x).producer;
    if (conv_id == kNoNode || graph.node(conv_id).op != "Conv" || passes::single_consumer(graph, x) != bn_id) continue;
    const Node& conv = graph.node(conv_id);
    if (conv.attrs.has(kActivationAttr) || conv.outputs.size() != 1) continue;
    const Tensor* w = f32_constant(graph, conv.inputs[1], -1);
    if (!w || w->shape().empty()) continue;
    const int64_t channels = w->shape()[0];
    const Tensor* conv_bias = conv.inputs.size() > 2 ? f32_constant(graph, conv.inputs[2], channels) : nullptr;
    if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue && !conv_bias) continue;
    const Tensor* params[4];
    bool ok = true;
    for (size_t i = 0; i < 4; ++i) ok &= (params[i] = f32_constant(graph, bn.inputs[i + 1], channels)) != nullptr;
    if (!ok) continue;
    Result<float> epsilon = bn.attrs.get_float("epsilon", 1e-5f);
    if (!epsilon.is_ok()) return epsilon.status().with_context(graph.describe_node(bn_id) + ": ");
    Result<int64_t> training = bn.attrs.get_int("training_mode", 0);
    if (!training.is_ok() || *training != 0) continue;

    const float* scale = params[0]->data<float>();
    const float* shift = params[1]->data<float>();
    const float* mean = params[2]->data<float>();
    const float* var = params[3]->data<float>();
    Tensor new_w(w->type());
    Tensor new_b(TensorType{DType::kFloat32, {channels}});
    const int64_t per_channel = w->num_elements() / channels;
    for (int64_t c = 0; c < channels; ++c) {
      const double s = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + *epsilon);
      for (int64_t i = c * per_channel; i < (c + 1) * per_channel; ++i)
        new_w.data<float>()[i] = static_cast<float>(w->data<float>()[i] * s);
      const double b = conv_bias ? conv_bias->data<float>()[c] : 0.0;
      new_b.data<float>()[c] = static_cast<float>((b - mean[c]) * s + shift[c]);
    }
    const std::string stem = graph.node(conv_id).name;
    const ValueId w_id = graph.add_constant(graph.unique_value_name(stem + "_bn_weight"), std::move(new_w));
    const ValueId b_id = graph.add_constant(graph.unique_value_name(stem + "_bn_bias"), std::move(new_b));
    const ValueId y = graph.node(bn_id).outputs[0];
    Node& c = graph.node(conv_id);
    c.inputs.resize(3);
    c.inputs[1] = w_id;
    c.inputs[2] = b_id;
    passes::take_over_output(graph, conv_id, 0, y);
    keep[static_cast<size_t>(bn_id)] = false;
    ++folded;
  }
  if (folded > 0) graph.compact(keep);
  return folded;
}

}  // namespace hetsched
