#include "graph/passes/fold_conv_affine.h"

#include <algorithm>
#include <cmath>
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

// y = x * scale[m] + shift[m] per output channel m.
struct ChannelAffine {
  std::vector<double> scale, shift;
};

// The affine map `step` applies to its operand `x` (the other operands
// constants), for `channels` output channels of a `rank`-dim value.
std::optional<ChannelAffine> step_affine(const Graph& graph, const Node& step, size_t k, size_t rank,
                                         int64_t channels) {
  const size_t n = static_cast<size_t>(channels);
  if (step.op == "BatchNormalization") {
    if (k != 0 || step.inputs.size() != 5) return std::nullopt;
    Result<float> epsilon = step.attrs.get_float("epsilon", 1e-5f);
    Result<int64_t> training = step.attrs.get_int("training_mode", 0);
    if (!epsilon.is_ok() || !training.is_ok() || *training != 0) return std::nullopt;
    const Tensor* p[4];
    for (size_t i = 0; i < 4; ++i) {
      p[i] = f32_constant(graph, step.inputs[i + 1]);
      if (!p[i] || p[i]->num_elements() != channels) return std::nullopt;
    }
    ChannelAffine a{std::vector<double>(n), std::vector<double>(n)};
    for (size_t c = 0; c < n; ++c) {
      a.scale[c] = p[0]->data<float>()[c] / std::sqrt(static_cast<double>(p[3]->data<float>()[c]) + *epsilon);
      a.shift[c] = p[1]->data<float>()[c] - p[2]->data<float>()[c] * a.scale[c];
    }
    return a;
  }
  if (step.inputs.size() != 2) return std::nullopt;
  const std::optional<std::vector<double>> kc = per_channel(graph, step.inputs[1 - k], rank, channels);
  if (!kc) return std::nullopt;
  ChannelAffine a{std::vector<double>(n, 1.0), std::vector<double>(n, 0.0)};
  for (size_t c = 0; c < n; ++c) {
    const double v = (*kc)[c];
    if (step.op == "Mul") a.scale[c] = v;
    else if (step.op == "Div" && v != 0.0) a.scale[c] = 1.0 / v;
    else if (step.op == "Add") a.shift[c] = v;
    else if (step.op == "Sub") a.shift[c] = -v;
    else return std::nullopt;
  }
  return a;
}

// Folds node `step_id` into the Conv or ConvTranspose behind its operand,
// if it can.
bool fold_one(Graph& graph, NodeId step_id) {
  const Node& step = graph.node(step_id);
  const bool commutes = step.op == "Mul" || step.op == "Add";
  if (!commutes && step.op != "Sub" && step.op != "Div" && step.op != "BatchNormalization") return false;
  if (step.inputs.empty() || step.outputs.size() != 1) return false;
  for (size_t k = 0; k < 2 && k < step.inputs.size(); ++k) {
    if (k == 1 && !commutes) break;
    const ValueId x = step.inputs[k];
    if (x == kNoValue) continue;
    const NodeId conv_id = graph.value(x).producer;
    if (conv_id == kNoNode || passes::single_consumer(graph, x) != step_id) continue;
    const Node& conv = graph.node(conv_id);
    const bool transposed = conv.op == "ConvTranspose";
    if ((conv.op != "Conv" && !transposed) || conv.attrs.has(kActivationAttr) || conv.outputs.size() != 1 ||
        conv.inputs.size() < 2)
      continue;
    const Tensor* w = f32_constant(graph, conv.inputs[1]);
    if (!w || w->shape().size() < 3) continue;
    Result<int64_t> group = conv.attrs.get_int("group", 1);
    if (!group.is_ok() || *group < 1) continue;
    // Conv W: [M, C/group, k...]; ConvTranspose W: [C, M/group, k...].
    const int64_t channels = transposed ? w->shape()[1] * *group : w->shape()[0];
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
    const Tensor* bias = has_bias ? f32_constant(graph, conv.inputs[2]) : nullptr;
    if (has_bias && (!bias || bias->num_elements() != channels)) continue;
    const Value& xv = graph.value(x);
    const Value& yv = graph.value(step.outputs[0]);
    if (!xv.type_known || !yv.type_known || !(xv.type == yv.type) || xv.type.dtype != DType::kFloat32) continue;
    const std::optional<ChannelAffine> a = step_affine(graph, step, k, w->shape().size(), channels);
    if (!a) continue;

    // The output channel of each weight element.
    const int64_t taps = w->num_elements() / (w->shape()[0] * w->shape()[1]);
    const int64_t in_per_group = transposed ? w->shape()[0] / *group : 0;
    auto out_channel = [&](int64_t i) {
      const int64_t row = i / taps;  // index over W's first two dims
      if (!transposed) return row / w->shape()[1];
      const int64_t ci = row / w->shape()[1], o = row % w->shape()[1];
      return ci / in_per_group * w->shape()[1] + o;
    };
    const bool scales = std::any_of(a->scale.begin(), a->scale.end(), [](double v) { return v != 1.0; });
    const std::string stem = conv.name;
    const ValueId y = step.outputs[0];
    std::optional<ValueId> w_id;
    if (scales) {
      Tensor new_w(w->type());
      for (int64_t i = 0; i < w->num_elements(); ++i)
        new_w.data<float>()[i] = static_cast<float>(w->data<float>()[i] * a->scale[out_channel(i)]);
      w_id = graph.add_constant(graph.unique_value_name(stem + "_affine_weight"), std::move(new_w));
    }
    Tensor b_tensor(TensorType{DType::kFloat32, {channels}});
    for (int64_t m = 0; m < channels; ++m) {
      const double b = bias ? bias->data<float>()[m] : 0.0;
      b_tensor.data<float>()[m] = static_cast<float>(b * a->scale[m] + a->shift[m]);
    }
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
