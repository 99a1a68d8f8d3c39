#include "graph/passes/compute_f16_in_f32.h"


namespace hetsched {

namespace {

constexpr int64_t kOnnxFloat = 1;

bool is_onnx_half_float(int64_t onnx_type) {
  const std::optional<DType> d = dtype_from_onnx(static_cast<int>(onnx_type));
  return d && is_half_float(*d);
}

Tensor widened(const Tensor& t) {
  Tensor w(TensorType{DType::kFloat32, t.shape()});
  const auto* h = t.data<uint16_t>();
  float* f = w.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) f[i] = half_float_to_float(t.dtype(), h[i]);
  return w;
}

ValueId add_cast(Graph& g, ValueId from, int64_t to, const std::string& out_name) {
  Attributes attrs;
  attrs.set("to", Attribute{to});
  const NodeId n = g.add_node("Cast", g.unique_node_name(out_name + "_cast"), {from}, {out_name}, std::move(attrs));
  return g.node(n).outputs[0];
}

}  // namespace

bool has_f16_tensors(const Graph& graph) {
  for (ValueId v : graph.inputs())
    if (is_half_float(graph.value(v).type.dtype)) return true;
  for (const Value& v : graph.values())
    if (v.is_constant() && is_half_float(v.constant->dtype())) return true;
  return false;
}

Result<Graph> compute_f16_in_f32(const Graph& g, const std::vector<DType>& output_dtypes) {
  Graph out(g.name());
  out.set_opset(g.opset());
  std::vector<ValueId> map(g.num_values(), kNoValue);
  std::vector<std::pair<ValueId, std::string>> casts_in;  // f16 inputs, cast once every input is added
  for (ValueId v : g.inputs()) {
    const Value& in = g.value(v);
    map[v] = out.add_input(in.name, in.type);
    if (is_half_float(in.type.dtype)) casts_in.push_back({v, in.name});
  }
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& c = g.value(v);
    if (!c.is_constant()) continue;
    map[v] = is_half_float(c.constant->dtype()) ? out.add_constant(c.name, widened(*c.constant))
                                                     : out.add_constant(c.name, c.constant);
  }
  for (const auto& [v, name] : casts_in) map[v] = add_cast(out, map[v], kOnnxFloat, out.unique_value_name(name + "_f32"));

  std::vector<int64_t> to_half(g.num_values(), 0);  // outputs cast back: their ONNX type, else 0
  for (size_t i = 0; i < g.outputs().size(); ++i)
    if (i < output_dtypes.size() && is_half_float(output_dtypes[i]))
      to_half[g.outputs()[i]] = dtype_to_onnx(output_dtypes[i]);
  for (const Node& node : g.nodes()) {
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? kNoValue : map[v]);
    Attributes attrs;
    for (const auto& [name, a] : node.attrs.all()) {
      if (node.op == "Cast" && name == "to" && std::holds_alternative<int64_t>(a) &&
          is_onnx_half_float(std::get<int64_t>(a))) {
        attrs.set(name, Attribute{kOnnxFloat});
      } else if (const Tensor* t = std::get_if<Tensor>(&a); t && is_half_float(t->dtype())) {
        attrs.set(name, Attribute{widened(*t)});
      } else {
        attrs.set(name, a);
      }
    }
    std::vector<std::string> names;
    for (ValueId v : node.outputs) {
      const std::string& name = g.value(v).name;
      names.push_back(to_half[v] ? name + "_f32" : name);
    }
    const NodeId n = out.add_node(node.op, node.name, std::move(inputs), std::move(names), std::move(attrs));
    for (size_t i = 0; i < node.outputs.size(); ++i) map[node.outputs[i]] = out.node(n).outputs[i];
  }
  for (ValueId v : g.outputs())
    out.add_output(to_half[v] ? add_cast(out, map[v], to_half[v], g.value(v).name) : map[v]);
  HS_RETURN_IF_ERROR(out.validate());
  return out;
}

}  // namespace hetsched
