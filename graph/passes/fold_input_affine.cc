#include "graph/passes/fold_input_affine.h"

#include <optional>
#include <string>
#include <vector>

#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

const Tensor* f32_constant(const Graph& graph, ValueId value) {
  if (value == kNoValue) return nullptr;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.constant->dtype() != DType::kFloat32) return nullptr;
  return v.constant.get();
}

// One value per channel of a rank-4 operand (channels on dim 1), from a
// scalar or per-channel constant; nothing otherwise.
std::optional<std::vector<double>> per_channel(const Graph& graph, ValueId value, int64_t channels) {
  const Tensor* t = f32_constant(graph, value);
  if (!t || t->shape().size() > 4) return std::nullopt;
  const Shape& shape = t->shape();
  const size_t offset = 4 - shape.size();
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != 1 && !(offset + i == 1 && shape[i] == channels)) return std::nullopt;
    count *= shape[i];
  }
  std::vector<double> out(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) out[c] = t->data<float>()[count == 1 ? 0 : c];
  return out;
}

bool unpadded_2d(const Node& conv) {
  Result<std::string> auto_pad = conv.attrs.get_string("auto_pad", "NOTSET");
  if (!auto_pad.is_ok() || (*auto_pad != "NOTSET" && *auto_pad != "VALID")) return false;
  Result<std::vector<int64_t>> pads = conv.attrs.get_ints("pads", {});
  if (!pads.is_ok()) return false;
  for (int64_t p : *pads)
    if (p != 0) return false;
  return true;
}

// Whether `step` is the last Mul of a GELU written out around Erf,
// x * (Erf(x / sqrt2) + 1) * 0.5: folding its 0.5 into the conv after it
// (MaxViT's MBConv expand conv, then its depthwise conv) would leave a
// pattern that is no GELU, which the delegates then run as five passes
// over the tensor rather than one Gelu (passes/fuse_gelu.h).
bool ends_written_out_gelu(const Graph& graph, const Node& step) {
  if (step.op != "Mul") return false;
  const auto producer_op = [&](ValueId v) -> const Node* {
    if (v == kNoValue || graph.value(v).producer == kNoNode) return nullptr;
    return &graph.node(graph.value(v).producer);
  };
  for (ValueId in : step.inputs) {
    const Node* product = producer_op(in);
    if (!product || product->op != "Mul") continue;
    for (ValueId factor : product->inputs) {
      const Node* add = producer_op(factor);
      if (!add || add->op != "Add") continue;
      for (ValueId term : add->inputs)
        if (const Node* erf = producer_op(term); erf && erf->op == "Erf") return true;
    }
  }
  return false;
}

// Folds the step feeding Conv `conv_id`, if it can; returns whether it did
// and marks the step's node in `keep`.
bool fold_one(Graph& graph, NodeId conv_id, std::vector<bool>& keep) {
  const Node& conv = graph.node(conv_id);
  if (conv.inputs.size() < 2 || conv.inputs[0] == kNoValue) return false;
  // Zero padding stays zero under a scale, not under an offset.
  const bool padded = !unpadded_2d(conv);
  const ValueId y = conv.inputs[0];
  const NodeId step_id = graph.value(y).producer;
  if (step_id == kNoNode || passes::single_consumer(graph, y) != conv_id) return false;
  const Node& step = graph.node(step_id);
  if (ends_written_out_gelu(graph, step)) return false;
  const bool commutes = step.op == "Mul" || step.op == "Add";
  if (!commutes && step.op != "Sub" && step.op != "Div") return false;
  if (padded && step.op != "Mul" && step.op != "Div") return false;
  if (step.inputs.size() != 2 || step.outputs.size() != 1) return false;
  const Tensor* w = f32_constant(graph, conv.inputs[1]);
  if (!w || w->shape().size() != 4) return false;
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  const Tensor* bias = has_bias ? f32_constant(graph, conv.inputs[2]) : nullptr;
  const int64_t m_count = w->shape()[0], group_in = w->shape()[1];
  if (has_bias && (!bias || bias->num_elements() != m_count)) return false;
  const Value& yv = graph.value(y);
  if (!yv.type_known || yv.type.rank() != 4 || yv.type.dtype != DType::kFloat32) return false;
  const int64_t channels = yv.type.shape[1];
  if (group_in == 0 || channels % group_in != 0) return false;
  const int64_t groups = channels / group_in;
  if (m_count % groups != 0) return false;
  const int64_t m_per_group = m_count / groups;
  for (size_t k = 0; k < 2; ++k) {
    if (k == 1 && !commutes) break;
    const ValueId x = step.inputs[k];
    const ValueId c = step.inputs[1 - k];
    if (x == kNoValue || c == kNoValue) continue;
    const Value& xv = graph.value(x);
    if (!xv.type_known || !(xv.type == yv.type)) continue;
    const std::optional<std::vector<double>> kc = per_channel(graph, c, channels);
    if (!kc) continue;
    if (step.op == "Div")
      for (double d : *kc)
        if (d == 0.0) return false;
    const int64_t taps = w->shape()[2] * w->shape()[3];
    const float* wd = w->data<float>();
    // Input channel of W's (m, i): group of m, then i within it.
    auto in_channel = [&](int64_t m, int64_t i) { return (m / m_per_group) * group_in + i; };
    std::vector<float> new_b(static_cast<size_t>(m_count), 0.f);
    if (bias)
      for (int64_t m = 0; m < m_count; ++m) new_b[m] = bias->data<float>()[m];
    const std::string stem = conv.name;
    std::optional<ValueId> w_id;
    if (step.op == "Mul" || step.op == "Div") {
      Tensor new_w(w->type());
      for (int64_t m = 0; m < m_count; ++m)
        for (int64_t i = 0; i < group_in; ++i) {
          const double s = (*kc)[in_channel(m, i)];
          for (int64_t t = 0; t < taps; ++t) {
            const int64_t at = (m * group_in + i) * taps + t;
            new_w.data<float>()[at] = static_cast<float>(step.op == "Mul" ? wd[at] * s : wd[at] / s);
          }
        }
      w_id = graph.add_constant(graph.unique_value_name(stem + "_in_affine_weight"), std::move(new_w));
    } else {
      const double sign = step.op == "Add" ? 1.0 : -1.0;
      for (int64_t m = 0; m < m_count; ++m) {
        double sum = new_b[m];
        for (int64_t i = 0; i < group_in; ++i)
          for (int64_t t = 0; t < taps; ++t) sum += sign * wd[(m * group_in + i) * taps + t] * (*kc)[in_channel(m, i)];
        new_b[m] = static_cast<float>(sum);
      }
    }
    Tensor b_tensor(TensorType{DType::kFloat32, {m_count}});
    for (int64_t m = 0; m < m_count; ++m) b_tensor.data<float>()[m] = new_b[m];
    const ValueId b_id = graph.add_constant(graph.unique_value_name(stem + "_in_affine_bias"), std::move(b_tensor));
    Node& cv = graph.node(conv_id);
    cv.inputs.resize(3);
    cv.inputs[0] = x;
    if (w_id) cv.inputs[1] = *w_id;
    cv.inputs[2] = b_id;
    keep[static_cast<size_t>(step_id)] = false;
    // The step no longer runs; it must not count as a reader of x.
    graph.node(step_id).inputs.clear();
    return true;
  }
  return false;
}

// The per-channel constant and data operand of a binary step, the data
// operand first unless the op commutes.
struct Operands {
  ValueId data = kNoValue;
  std::vector<double> k;
};

std::optional<Operands> operands(const Graph& graph, const Node& step, int64_t channels) {
  if (step.inputs.size() != 2 || step.outputs.size() != 1) return std::nullopt;
  const bool commutes = step.op == "Mul" || step.op == "Add";
  for (size_t k = 0; k < 2; ++k) {
    if (k == 1 && !commutes) break;
    const ValueId data = step.inputs[k];
    if (data == kNoValue || step.inputs[1 - k] == kNoValue) continue;
    std::optional<std::vector<double>> c = per_channel(graph, step.inputs[1 - k], channels);
    if (c) return Operands{data, std::move(*c)};
  }
  return std::nullopt;
}

// x -> Mul(s) or Div(s) -> Add(t) or Sub(t) -> padded Conv becomes
// x -> Add(t / s) or Sub(t / s) (t * s for Div) -> Mul(s) or Div(s) -> Conv,
// the scale next to the Conv where it can fold. The two nodes keep their
// places in the graph (and so its order) and swap what they compute.
bool move_scale_past_offset(Graph& graph, NodeId conv_id) {
  const Node& conv = graph.node(conv_id);
  if (conv.inputs.size() < 2 || conv.inputs[0] == kNoValue || unpadded_2d(conv)) return false;
  const Tensor* w = f32_constant(graph, conv.inputs[1]);
  if (!w || w->shape().size() != 4) return false;
  const ValueId y = conv.inputs[0];
  const NodeId offset_id = graph.value(y).producer;
  if (offset_id == kNoNode || passes::single_consumer(graph, y) != conv_id) return false;
  const Node& offset = graph.node(offset_id);
  if (offset.op != "Add" && offset.op != "Sub") return false;
  const Value& yv = graph.value(y);
  if (!yv.type_known || yv.type.rank() != 4 || yv.type.dtype != DType::kFloat32) return false;
  const int64_t channels = yv.type.shape[1];
  const std::optional<Operands> t = operands(graph, offset, channels);
  if (!t) return false;
  const ValueId v1 = t->data;
  const NodeId scale_id = graph.value(v1).producer;
  if (scale_id == kNoNode || passes::single_consumer(graph, v1) != offset_id) return false;
  const Node& scale = graph.node(scale_id);
  if (scale.op != "Mul" && scale.op != "Div") return false;
  const std::optional<Operands> sc = operands(graph, scale, channels);
  if (!sc) return false;
  const Value& xv = graph.value(sc->data);
  if (!xv.type_known || !(xv.type == yv.type) || !(graph.value(v1).type == yv.type)) return false;
  for (double v : sc->k)
    if (v == 0.0) return false;
  Tensor new_t(TensorType{DType::kFloat32, {1, channels, 1, 1}});
  Tensor s_tensor(TensorType{DType::kFloat32, {1, channels, 1, 1}});
  for (int64_t c = 0; c < channels; ++c) {
    new_t.data<float>()[c] = static_cast<float>(scale.op == "Mul" ? t->k[c] / sc->k[c] : t->k[c] * sc->k[c]);
    s_tensor.data<float>()[c] = static_cast<float>(sc->k[c]);
  }
  const std::string offset_op = offset.op, scale_op = scale.op, stem = conv.name;
  const ValueId x = sc->data;
  const ValueId t_id = graph.add_constant(graph.unique_value_name(stem + "_moved_offset"), std::move(new_t));
  const ValueId s_id = graph.add_constant(graph.unique_value_name(stem + "_moved_scale"), std::move(s_tensor));
  Node& first = graph.node(scale_id);
  first.op = offset_op;
  first.inputs = {x, t_id};
  first.attrs = Attributes();
  Node& second = graph.node(offset_id);
  second.op = scale_op;
  second.inputs = {v1, s_id};
  second.attrs = Attributes();
  return true;
}

}  // namespace

Result<int> fold_input_affine(Graph& graph) {
  std::vector<bool> keep(graph.num_nodes(), true);
  int folded = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    if (graph.node(id).op != "Conv") continue;
    while (fold_one(graph, id, keep) || (move_scale_past_offset(graph, id) && fold_one(graph, id, keep))) ++folded;
  }
  if (folded > 0) graph.compact(keep);
  return folded;
}

}  // namespace hetsched
