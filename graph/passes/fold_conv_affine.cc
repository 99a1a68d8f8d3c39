#include "graph/passes/fold_conv_affine.h"

#include <optional>
#include <string>
#include <vector>

#include "graph/passes/fused_activation.h"
#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

// The constant's value per output channel (`channels` entries), or nothing
// when it is not a scalar or per-channel f32 constant for an output of rank
// `rank` with channels on dim 1.
std::optional<std::vector<double>> per_channel(const Graph& graph, ValueId value, size_t rank, int64_t channels) {
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->dtype() != DType::kFloat32) return std::nullopt;
  const Shape& shape = v.constant->shape();
  if (shape.size() > rank) return std::nullopt;
  const size_t offset = rank - shape.size();
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool channel_dim = offset + i == 1;
    if (shape[i] != 1 && !(channel_dim && shape[i] == channels)) return std::nullopt;
    count *= shape[i];
  }
  const float* data = v.constant->data<float>();
  std::vector<double> out(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) out[c] = data[count == 1 ? 0 : c];
  return out;
}

const Tensor* f32_constant(const Graph& graph, ValueId value) {
  if (value == kNoValue) return nullptr;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->dtype() != DType::kFloat32) return nullptr;
  return v.constant.get();
}

// Folds node `step_id` into the Conv behind its operand, if it can.
bool fold_one(Graph& graph, NodeId step_id) {
  const Node& step = graph.node(step_id);
  const bool commutes = step.op == "Mul" || step.op == "Add";
  if (!commutes && step.op != "Sub" && step.op != "Div") return false;
  if (step.inputs.size() != 2 || step.outputs.size() != 1) return false;
  for (size_t k = 0; k < 2; ++k) {
    if (k == 1 && !commutes) break;
    const ValueId x = step.inputs[k];
    const ValueId c = step.inputs[1 - k];
    if (x == kNoValue || c == kNoValue) continue;
    const NodeId conv_id = graph.value(x).producer;
    if (conv_id == kNoNode || graph.node(conv_id).op != "Conv" || passes::single_consumer(graph, x) != step_id)
      continue;
    const Node& conv = graph.node(conv_id);
    if (conv.attrs.has(kActivationAttr) || conv.outputs.size() != 1 || conv.inputs.size() < 2) continue;
    const Tensor* w = f32_constant(graph, conv.inputs[1]);
    if (!w || w->shape().size() < 3) continue;
    const int64_t channels = w->shape()[0];
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
    const Tensor* bias = has_bias ? f32_constant(graph, conv.inputs[2]) : nullptr;
    if (has_bias && (!bias || bias->num_elements() != channels)) continue;
    const Value& xv = graph.value(x);
    const Value& yv = graph.value(step.outputs[0]);
    if (!xv.type_known || !yv.type_known || !(xv.type == yv.type) || xv.type.dtype != DType::kFloat32) continue;
    const std::optional<std::vector<double>> k_values = per_channel(graph, c, w->shape().size(), channels);
    if (!k_values) continue;
    const std::vector<double>& kc = *k_values;
    const bool scales = step.op == "Mul" || step.op == "Div";
    if (step.op == "Div")
      for (double d : kc)
        if (d == 0.0) return false;

    const int64_t per_channel_weights = w->num_elements() / channels;
    std::vector<float> new_b(static_cast<size_t>(channels), 0.f);
    if (bias)
      for (int64_t m = 0; m < channels; ++m) new_b[m] = bias->data<float>()[m];
    const std::string stem = conv.name;
    const ValueId y = step.outputs[0];
    std::optional<ValueId> w_id;
    if (scales) {
      Tensor new_w(w->type());
      for (int64_t m = 0; m < channels; ++m) {
        for (int64_t i = m * per_channel_weights; i < (m + 1) * per_channel_weights; ++i)
          new_w.data<float>()[i] = static_cast<float>(step.op == "Mul" ? w->data<float>()[i] * kc[m]
                                                                       : w->data<float>()[i] / kc[m]);
        new_b[m] = static_cast<float>(step.op == "Mul" ? new_b[m] * kc[m] : new_b[m] / kc[m]);
      }
      w_id = graph.add_constant(graph.unique_value_name(stem + "_affine_weight"), std::move(new_w));
    } else {
      for (int64_t m = 0; m < channels; ++m)
        new_b[m] = static_cast<float>(step.op == "Add" ? new_b[m] + kc[m] : new_b[m] - kc[m]);
    }
    Tensor b_tensor(TensorType{DType::kFloat32, {channels}});
    for (int64_t m = 0; m < channels; ++m) b_tensor.data<float>()[m] = new_b[m];
    const ValueId b_id = graph.add_constant(graph.unique_value_name(stem + "_affine_bias"), std::move(b_tensor));
    Node& cv = graph.node(conv_id);
    cv.inputs.resize(3);
    if (w_id) cv.inputs[1] = *w_id;
    cv.inputs[2] = b_id;
    passes::take_over_output(graph, conv_id, 0, y);
    return true;
  }
  return false;
}

}  // namespace

Result<int> fold_conv_affine(Graph& graph) {
  std::vector<bool> keep(graph.num_nodes(), true);
  int folded = 0;
  // Nodes are in topological order, so the second step of a chain finds
  // the Conv that already took over the first step's output.
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    if (!fold_one(graph, id)) continue;
    keep[static_cast<size_t>(id)] = false;
    ++folded;
  }
  if (folded > 0) graph.compact(keep);
  return folded;
}

}  // namespace hetsched
