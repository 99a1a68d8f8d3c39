#include "graph/passes/compute_f16_in_f32.h"

#include <bit>
#include <cstring>

namespace hetsched {

namespace {

constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10;

Tensor widened(const Tensor& t) {
  Tensor w(TensorType{DType::kFloat32, t.shape()});
  const auto* h = t.data<uint16_t>();
  float* f = w.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) f[i] = half_to_float(h[i]);
  return w;
}

ValueId add_cast(Graph& g, ValueId from, int64_t to, const std::string& out_name) {
  Attributes attrs;
  attrs.set("to", Attribute{to});
  const NodeId n = g.add_node("Cast", g.unique_node_name(out_name + "_cast"), {from}, {out_name}, std::move(attrs));
  return g.node(n).outputs[0];
}

}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (man << 13);  // inf, NaN
  } else if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal half: normalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t exp = (bits >> 23) & 0xff, man = bits & 0x7fffff;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00);  // overflow: inf
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal
    const uint32_t m = man | 0x800000;
    const int shift = 14 - e;
    uint32_t half = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (man >> 13);
  const uint32_t rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry into the exponent: still right
  return static_cast<uint16_t>(sign | half);
}

bool has_f16_tensors(const Graph& graph) {
  for (ValueId v : graph.inputs())
    if (graph.value(v).type.dtype == DType::kFloat16) return true;
  for (const Value& v : graph.values())
    if (v.is_constant() && v.constant->dtype() == DType::kFloat16) return true;
  return false;
}

Result<Graph> compute_f16_in_f32(const Graph& g, const std::vector<bool>& f16_outputs) {
  Graph out(g.name());
  out.set_opset(g.opset());
  std::vector<ValueId> map(g.num_values(), kNoValue);
  std::vector<std::pair<ValueId, std::string>> casts_in;  // f16 inputs, cast once every input is added
  for (ValueId v : g.inputs()) {
    const Value& in = g.value(v);
    map[v] = out.add_input(in.name, in.type);
    if (in.type.dtype == DType::kFloat16) casts_in.push_back({v, in.name});
  }
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& c = g.value(v);
    if (!c.is_constant()) continue;
    map[v] = c.constant->dtype() == DType::kFloat16 ? out.add_constant(c.name, widened(*c.constant))
                                                     : out.add_constant(c.name, c.constant);
  }
  for (const auto& [v, name] : casts_in) map[v] = add_cast(out, map[v], kOnnxFloat, out.unique_value_name(name + "_f32"));

  std::vector<bool> to_half(g.num_values(), false);  // outputs cast back to f16
  for (size_t i = 0; i < g.outputs().size(); ++i)
    if (i < f16_outputs.size() && f16_outputs[i]) to_half[g.outputs()[i]] = true;
  for (const Node& node : g.nodes()) {
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? kNoValue : map[v]);
    Attributes attrs;
    for (const auto& [name, a] : node.attrs.all()) {
      if (node.op == "Cast" && name == "to" && std::holds_alternative<int64_t>(a) && std::get<int64_t>(a) == kOnnxFloat16) {
        attrs.set(name, Attribute{kOnnxFloat});
      } else if (const Tensor* t = std::get_if<Tensor>(&a); t && t->dtype() == DType::kFloat16) {
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
    out.add_output(to_half[v] ? add_cast(out, map[v], kOnnxFloat16, g.value(v).name) : map[v]);
  HS_RETURN_IF_ERROR(out.validate());
  return out;
}

}  // namespace hetsched
