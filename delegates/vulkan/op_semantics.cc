#include "delegates/vulkan/op_semantics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "graph/passes/fused_activation.h"
#include "graph/op_schema.h"
#include "graph/resize_taps.h"

namespace hetsched::vulkan {

namespace {

const Tensor* constant_input(const Graph& graph, const Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return nullptr;
  return graph.value(n.inputs[i]).constant.get();
}

bool has_input(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i] != kNoValue; }

Result<std::vector<int64_t>> window_ints(const Attributes& attrs, const std::string& name, size_t count,
                                         int64_t fallback) {
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.get_ints(name, std::vector<int64_t>(count, fallback)));
  if (v.size() != count)
    return invalid_argument("attribute '" + name + "' has " + std::to_string(v.size()) + " values, expected " +
                            std::to_string(count));
  return v;
}

}  // namespace

bool is_alias_node(const Graph& g, const Node& n) {
  if (n.op == "Cast") return g.value(n.inputs[0]).type.dtype == g.value(n.outputs[0]).type.dtype;
  return n.op == "Reshape" || n.op == "Flatten" || n.op == "Identity" || n.op == "Squeeze" || n.op == "Unsqueeze" ||
         n.op == "Dropout";
}

bool is_reduce_op(std::string_view op) {
  return op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" || op == "ReduceProd";
}

bool is_unary_elementwise(std::string_view op) {
  for (std::string_view u : {"Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Clip", "HardSigmoid", "HardSwish", "Sin",
                             "Cos", "Reciprocal", "Sqrt", "Erf", "Gelu", "Floor", "Ceil", "Log", "Round"})
    if (op == u) return true;
  return false;
}

std::optional<OpCode> binary_op_code(std::string_view op) {
  if (op == "Add") return OpCode::kAdd;
  if (op == "Sub") return OpCode::kSub;
  if (op == "Mul") return OpCode::kMul;
  if (op == "Div") return OpCode::kDiv;
  if (op == "Pow") return OpCode::kPow;
  if (op == "Min") return OpCode::kMin;
  if (op == "Max") return OpCode::kMax;
  return std::nullopt;
}

Result<std::optional<UnaryOp>> read_conv_activation(const Node& conv) {
  HS_ASSIGN_OR_RETURN(const FusedActivation act, read_fused_activation(conv.attrs));
  switch (act.kind) {
    case FusedActivation::Kind::kNone: return std::optional<UnaryOp>();
    case FusedActivation::Kind::kRelu: return std::optional<UnaryOp>(UnaryOp{OpCode::kRelu});
    case FusedActivation::Kind::kClip: return std::optional<UnaryOp>(UnaryOp{OpCode::kClip, act.min, act.max});
    case FusedActivation::Kind::kSigmoid: return std::optional<UnaryOp>(UnaryOp{OpCode::kSigmoid});
    case FusedActivation::Kind::kHardSigmoid:
      return std::optional<UnaryOp>(UnaryOp{OpCode::kHardSigmoid, act.alpha, act.beta});
    case FusedActivation::Kind::kHardSwish: return std::optional<UnaryOp>(UnaryOp{OpCode::kHardSwish});
    case FusedActivation::Kind::kLeakyRelu: break;
  }
  return unsupported("fused activation LeakyRelu is not implemented in the Vulkan shaders");
}

Result<UnaryOp> read_unary_op(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  static const std::pair<std::string_view, OpCode> kPlain[] = {
      {"Relu", OpCode::kRelu},
      {"Sigmoid", OpCode::kSigmoid},
      {"Tanh", OpCode::kTanh},
      {"Exp", OpCode::kExp},
      {"Neg", OpCode::kNeg},
      {"Abs", OpCode::kAbs},
      {"Sin", OpCode::kSin},
      {"Cos", OpCode::kCos},
      {"Reciprocal", OpCode::kReciprocal},
      {"Sqrt", OpCode::kSqrt},
      {"HardSwish", OpCode::kHardSwish},
      {"Erf", OpCode::kErf},
      {"Floor", OpCode::kFloor},
      {"Ceil", OpCode::kCeil},
      {"Log", OpCode::kLog},
      {"Round", OpCode::kRound},
  };
  for (const auto& [name, code] : kPlain)
    if (n.op == name) return UnaryOp{code};
  if (n.op == "HardSigmoid") {
    HS_ASSIGN_OR_RETURN(const float alpha, n.attrs.get_float("alpha", 0.2f));
    HS_ASSIGN_OR_RETURN(const float beta, n.attrs.get_float("beta", 0.5f));
    return UnaryOp{OpCode::kHardSigmoid, alpha, beta};
  }
  if (n.op == "Gelu") {
    HS_ASSIGN_OR_RETURN(const std::string approximate, n.attrs.get_string("approximate", "none"));
    if (approximate == "none") return UnaryOp{OpCode::kGelu};
    if (approximate == "tanh") return UnaryOp{OpCode::kGeluTanh};
    return invalid_argument("Gelu's approximate is '" + approximate + "', expected none or tanh");
  }
  if (n.op == "Clip") {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    UnaryOp op{OpCode::kClip, -kInf, kInf};
    if (graph.opset() <= 10) {
      HS_ASSIGN_OR_RETURN(op.p0, n.attrs.get_float("min", -kInf));
      HS_ASSIGN_OR_RETURN(op.p1, n.attrs.get_float("max", kInf));
      return op;
    }
    for (size_t i = 1; i <= 2; ++i) {
      if (!has_input(n, i)) continue;
      const Tensor* t = constant_input(graph, n, i);
      if (!t) return unsupported(std::string("Clip's ") + (i == 1 ? "min" : "max") + " must be a constant");
      if (t->dtype() != DType::kFloat32 || t->num_elements() != 1)
        return invalid_argument("Clip's bound must be an f32 scalar, got " + t->type().to_string());
      (i == 1 ? op.p0 : op.p1) = t->data<float>()[0];
    }
    return op;
  }
  return unsupported("op " + n.op + " is not a unary elementwise op");
}

Result<BatchNormFactors> read_batch_norm(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  const Tensor* params[5] = {};
  for (size_t i = 1; i < 5; ++i) {
    params[i] = constant_input(graph, n, i);
    if (!params[i]) return unsupported(std::string("BatchNormalization's ") + kNames[i] + " must be a constant");
  }
  HS_ASSIGN_OR_RETURN(const float epsilon, n.attrs.get_float("epsilon", 1e-5f));
  const int64_t channels = params[1]->num_elements();
  BatchNormFactors f;
  f.mul.resize(static_cast<size_t>(channels));
  f.add.resize(static_cast<size_t>(channels));
  const float* scale = params[1]->data<float>();
  const float* shift = params[2]->data<float>();
  const float* mean = params[3]->data<float>();
  const float* var = params[4]->data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    f.mul[c] = scale[c] / std::sqrt(var[c] + epsilon);
    f.add[c] = shift[c] - mean[c] * f.mul[c];
  }
  return f;
}

Result<Window2d> window_2d(const Attributes& attrs, const Shape& x, const std::vector<int64_t>& kernel, const Shape& y,
                           bool ceil_mode) {
  const size_t nsp = kernel.size();
  if (nsp < 1 || nsp > 2 || x.size() != nsp + 2 || y.size() != nsp + 2)
    return unsupported("only 1-D and 2-D windows over (N, C, spatial...) are supported, got input " +
                       shape_to_string(x) + " and output " + shape_to_string(y));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, window_ints(attrs, "strides", nsp, 1));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations, window_ints(attrs, "dilations", nsp, 1));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, window_ints(attrs, "pads", 2 * nsp, 0));
  HS_ASSIGN_OR_RETURN(const std::string auto_pad, attrs.get_string("auto_pad", "NOTSET"));
  std::vector<int64_t> in(nsp), out(nsp), begin(nsp), end(nsp);
  for (size_t i = 0; i < nsp; ++i) {
    in[i] = x[2 + i];
    const int64_t s = strides[i];
    const int64_t dk = (kernel[i] - 1) * dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Just enough padding for ceil(in / stride) windows; the odd pixel
      // goes at the end for SAME_UPPER, at the start for SAME_LOWER.
      out[i] = (in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * s + dk - in[i]);
      begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[i] = total - begin[i];
      continue;
    }
    const bool valid = auto_pad == "VALID";
    begin[i] = valid ? 0 : pads[i];
    end[i] = valid ? 0 : pads[nsp + i];
    const int64_t span = in[i] + begin[i] + end[i] - dk;
    out[i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // Under ceil_mode a last window starting in the end padding is dropped.
    if (ceil_mode && (out[i] - 1) * s >= in[i] + begin[i]) --out[i];
  }
  if (!std::equal(out.begin(), out.end(), y.begin() + 2))
    return invalid_argument("output " + shape_to_string(y) + " does not have the spatial dims " + shape_to_string(out) +
                            " that the window attributes give");
  Window2d g;
  const size_t w = nsp - 1;
  g.in_w = in[w];
  g.out_w = out[w];
  g.kernel_w = kernel[w];
  g.stride_w = strides[w];
  g.dilation_w = dilations[w];
  g.pad_left = begin[w];
  g.pad_right = end[w];
  if (nsp == 2) {
    g.in_h = in[0];
    g.out_h = out[0];
    g.kernel_h = kernel[0];
    g.stride_h = strides[0];
    g.dilation_h = dilations[0];
    g.pad_top = begin[0];
    g.pad_bottom = end[0];
  }
  return g;
}

Result<std::optional<std::vector<int64_t>>> read_reduce_axes(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  const int64_t rank = static_cast<int64_t>(graph.value(n.inputs[0]).type.rank());
  std::vector<int64_t> axes;
  if (has_input(n, 1)) {
    const Tensor* t = constant_input(graph, n, 1);
    if (!t) return unsupported(n.op + "'s axes must be a constant");
    axes = t->to_int64_vector();
  } else {
    HS_ASSIGN_OR_RETURN(axes, n.attrs.get_ints("axes", {}));
  }
  HS_ASSIGN_OR_RETURN(const int64_t noop, n.attrs.get_int("noop_with_empty_axes", 0));
  if (axes.empty()) {
    if (noop != 0) return std::optional<std::vector<int64_t>>();
    axes.resize(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t& a : axes) {
    HS_ASSIGN_OR_RETURN(a, normalize_axis(a, rank));
  }
  return std::optional<std::vector<int64_t>>(std::move(axes));
}

Result<std::vector<int32_t>> read_gather_indices(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  const Tensor* t = constant_input(graph, n, 1);
  if (!t) return unsupported("indices must be a constant (indices computed at run time are not supported)");
  if (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)
    return invalid_argument("indices must be i64 or i32, got " + t->type().to_string());
  const Shape& data = graph.value(n.inputs[0]).type.shape;
  HS_ASSIGN_OR_RETURN(const int64_t raw_axis, n.attrs.get_int("axis", 0));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(raw_axis, static_cast<int64_t>(data.size())));
  const int64_t dim = data[static_cast<size_t>(axis)];
  std::vector<int32_t> out(static_cast<size_t>(t->num_elements()));
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    int64_t idx = t->int_at(i);
    if (idx < -dim || idx >= dim)
      return invalid_argument("index " + std::to_string(idx) + " (element " + std::to_string(i) +
                              " of the indices) is out of range [" + std::to_string(-dim) + ", " +
                              std::to_string(dim - 1) + "] for axis " + std::to_string(axis) + " of size " +
                              std::to_string(dim));
    if (idx < 0) idx += dim;
    out[static_cast<size_t>(i)] = static_cast<int32_t>(idx);
  }
  return out;
}

Result<ResizeTaps> resize_taps(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  const Shape& x = graph.value(n.inputs[0]).type.shape;
  const Shape& y = graph.value(n.outputs[0]).type.shape;
  // The mapping and taps every engine computes (graph/resize_taps.h).
  HS_ASSIGN_OR_RETURN(const ResizeMapping m, read_resize_mapping(graph, n, /*half_ok=*/true));
  auto axis = [&](double scale, int64_t in_len, int64_t out_len) {
    std::vector<ResizeTap> taps;
    for (const hetsched::ResizeTap& t : resize_axis_taps(m.linear, m.transform, m.rounding, scale, in_len, out_len))
      taps.push_back({t.lo, t.hi, t.w});
    return taps;
  };
  ResizeTaps taps;
  taps.linear = m.linear;
  taps.rows = axis(m.scale_h, x[2], y[2]);
  taps.cols = axis(m.scale_w, x[3], y[3]);
  return taps;
}

}  // namespace hetsched::vulkan
