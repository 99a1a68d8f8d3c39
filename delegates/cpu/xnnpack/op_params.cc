#include "delegates/cpu/xnnpack/op_params.h"

#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/ops_extra.h"
#include "graph/resize_taps.h"

namespace hetsched::cpu::xnnpack {

namespace {

const TensorType& input_type(const Graph& graph, const Node& node, size_t i) {
  return graph.value(node.inputs.at(i)).type;
}

const TensorType& output_type(const Graph& graph, const Node& node) { return graph.value(node.outputs.at(0)).type; }

// The portable kernels' reading of strides, dilations, pads and auto_pad,
// so both engines agree on the geometry.
Result<WindowGeometry> geometry(const Graph& graph, const Node& node, const std::vector<int64_t>& kernel,
                                bool ceil_mode) {
  const KernelContext ctx{node, {}, {}, graph.opset()};
  return window_geometry(ctx, input_type(graph, node, 0).shape, kernel, output_type(graph, node).shape, ceil_mode);
}

Window2d to_window(const WindowGeometry& g) {
  Window2d w;
  w.kernel_h = static_cast<uint32_t>(g.kernel_h);
  w.kernel_w = static_cast<uint32_t>(g.kernel_w);
  w.stride_h = static_cast<uint32_t>(g.stride_h);
  w.stride_w = static_cast<uint32_t>(g.stride_w);
  w.dilation_h = static_cast<uint32_t>(g.dilation_h);
  w.dilation_w = static_cast<uint32_t>(g.dilation_w);
  w.pad_top = static_cast<uint32_t>(g.pad_top);
  w.pad_right = static_cast<uint32_t>(g.pad_right);
  w.pad_bottom = static_cast<uint32_t>(g.pad_bottom);
  w.pad_left = static_cast<uint32_t>(g.pad_left);
  return w;
}

bool any_padding(const Window2d& w) { return (w.pad_top | w.pad_right | w.pad_bottom | w.pad_left) != 0; }

// Splits a Conv's fused activation into what XNNPACK's convolution clamps
// itself and what needs a node of its own after it.
Status read_conv_activation(const Node& node, ConvParams& p) {
  HS_ASSIGN_OR_RETURN(const FusedActivation a, read_fused_activation(node.attrs));
  switch (a.kind) {
    case FusedActivation::Kind::kNone:
      return Status::ok();
    case FusedActivation::Kind::kRelu:
      p.clamp.min = 0.f;
      return Status::ok();
    case FusedActivation::Kind::kClip:
      if (std::isnan(a.min) || std::isnan(a.max) || !(a.min < a.max))
        return unsupported("fused Clip [" + std::to_string(a.min) + ", " + std::to_string(a.max) +
                           "]: XNNPACK's clamp needs min < max");
      p.clamp = Clamp{a.min, a.max};
      return Status::ok();
    case FusedActivation::Kind::kSigmoid:
    case FusedActivation::Kind::kHardSwish:
    case FusedActivation::Kind::kLeakyRelu:
      p.then = a;
      return Status::ok();
    case FusedActivation::Kind::kHardSigmoid:
      if (!std::isfinite(a.alpha) || !std::isfinite(a.beta))
        return unsupported("fused HardSigmoid with a non-finite alpha or beta");
      p.out_scale = a.alpha;
      p.out_shift = a.beta;
      p.clamp = Clamp{0.f, 1.f};
      return Status::ok();
  }
  return unsupported("fused activation " + fused_activation_name(a.kind) + " has no XNNPACK equivalent");
}

Result<float> scalar_bound(const Graph& graph, const Node& node, size_t i, float fallback) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return fallback;
  const Tensor* t = constant_input(graph, node, i);
  if (!t) return unsupported("bound " + std::to_string(i) + " is computed at run time; XNNPACK's clamp takes constants");
  if (t->dtype() != DType::kFloat32 || t->num_elements() != 1)
    return unsupported("bound " + std::to_string(i) + " is not an f32 scalar: " + t->type().to_string());
  return t->data<float>()[0];
}

// A constant 1-D f32 input of `count` values.
Result<const float*> channel_constant(const Graph& graph, const Node& node, size_t i, int64_t count,
                                      const std::string& name) {
  const Tensor* t = constant_input(graph, node, i);
  if (!t) return unsupported(name + " is computed at run time; XNNPACK needs it constant");
  if (t->dtype() != DType::kFloat32 || t->num_elements() != count)
    return unsupported(name + " must be f32[" + std::to_string(count) + "], got " + t->type().to_string());
  return t->data<float>();
}

}  // namespace

const Tensor* constant_input(const Graph& graph, const Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return nullptr;
  return graph.value(node.inputs[i]).constant.get();
}

Result<ConvParams> read_conv(const Graph& graph, const Node& node) {
  const TensorType& x = input_type(graph, node, 0);
  if (x.rank() != 4) return unsupported("only 2-D convolutions (rank-4 X) map to XNNPACK, got X " + x.to_string());
  const Tensor* w = constant_input(graph, node, 1);
  if (!w) return unsupported("W is computed at run time; XNNPACK packs constant weights only");
  if (w->dtype() != DType::kFloat32 || w->shape().size() != 4)
    return unsupported("W must be f32 of rank 4, got " + w->type().to_string());
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    HS_ASSIGN_OR_RETURN(const float* bias, channel_constant(graph, node, 2, w->shape()[0], "bias B"));
    (void)bias;
  }
  ConvParams p;
  HS_ASSIGN_OR_RETURN(p.groups, node.attrs.get_int("group", 1));
  p.in_channels = x.shape[1];
  p.out_channels = w->shape()[0];
  if (p.groups < 1 || p.in_channels != w->shape()[1] * p.groups || p.out_channels % p.groups != 0)
    return invalid_argument("X " + x.to_string() + " and W " + w->type().to_string() + " do not fit group " +
                            std::to_string(p.groups));
  HS_ASSIGN_OR_RETURN(const WindowGeometry g, geometry(graph, node, {w->shape()[2], w->shape()[3]}, false));
  p.window = to_window(g);
  p.depthwise = p.groups > 1 && p.groups == p.in_channels;
  HS_RETURN_IF_ERROR(read_conv_activation(node, p));
  return p;
}

Result<ConvTransposeParams> read_conv_transpose(const Graph& graph, const Node& node) {
  const TensorType& x = input_type(graph, node, 0);
  if (x.rank() != 4)
    return unsupported("only 2-D transposed convolutions (rank-4 X) map to XNNPACK, got X " + x.to_string());
  const Tensor* w = constant_input(graph, node, 1);
  if (!w) return unsupported("W is computed at run time; XNNPACK packs constant weights only");
  if (w->dtype() != DType::kFloat32 || w->shape().size() != 4)
    return unsupported("W must be f32 of rank 4, got " + w->type().to_string());
  HS_ASSIGN_OR_RETURN(const ConvTransposeGeometry g, conv_transpose_geometry(node.attrs, x.shape, w->shape()));
  for (size_t i = 0; i < 2; ++i) {
    if (g.pad_begin[i] < 0 || g.pad_end[i] < 0)
      return unsupported("negative pads (output_shape beyond the full result) have no XNNPACK equivalent");
    if (g.output_padding[i] >= g.strides[i])
      return unsupported("output_padding not below the stride has no XNNPACK equivalent");
  }
  ConvTransposeParams p;
  p.groups = g.group;
  p.group_in = x.shape[1] / g.group;
  p.group_out = g.out_channels / g.group;
  Window2d& win = p.window;
  win.kernel_h = static_cast<uint32_t>(g.kernel[0]);
  win.kernel_w = static_cast<uint32_t>(g.kernel[1]);
  win.stride_h = static_cast<uint32_t>(g.strides[0]);
  win.stride_w = static_cast<uint32_t>(g.strides[1]);
  win.dilation_h = static_cast<uint32_t>(g.dilations[0]);
  win.dilation_w = static_cast<uint32_t>(g.dilations[1]);
  win.pad_top = static_cast<uint32_t>(g.pad_begin[0]);
  win.pad_left = static_cast<uint32_t>(g.pad_begin[1]);
  win.pad_bottom = static_cast<uint32_t>(g.pad_end[0]);
  win.pad_right = static_cast<uint32_t>(g.pad_end[1]);
  p.adjustment_h = static_cast<uint32_t>(g.output_padding[0]);
  p.adjustment_w = static_cast<uint32_t>(g.output_padding[1]);
  p.bias.assign(static_cast<size_t>(g.out_channels), 0.f);
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    HS_ASSIGN_OR_RETURN(const float* bias, channel_constant(graph, node, 2, g.out_channels, "bias B"));
    p.bias.assign(bias, bias + g.out_channels);
  }
  // ONNX W is [C, M/group, kH, kW]: input channel g*Cg+i, output channel
  // o of group g. XNNPACK wants [g*Mg+o, kH, kW, i].
  const std::vector<float> src = w->to_float_vector();
  const int64_t taps = g.kernel[0] * g.kernel[1];
  p.filter.resize(src.size());
  for (int64_t grp = 0; grp < p.groups; ++grp)
    for (int64_t i = 0; i < p.group_in; ++i)
      for (int64_t o = 0; o < p.group_out; ++o)
        for (int64_t t = 0; t < taps; ++t)
          p.filter[((grp * p.group_out + o) * taps + t) * p.group_in + i] =
              src[((grp * p.group_in + i) * p.group_out + o) * taps + t];
  return p;
}

Result<PoolParams> read_pool(const Graph& graph, const Node& node) {
  const bool is_max = node.op == "MaxPool";
  const TensorType& x = input_type(graph, node, 0);
  if (x.rank() != 4) return unsupported("only 2-D pools (rank-4 X) map to XNNPACK, got X " + x.to_string());
  if (node.outputs.size() > 1) return unsupported("the Indices output has no XNNPACK equivalent");
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, node.attrs.require_ints("kernel_shape"));
  HS_ASSIGN_OR_RETURN(const int64_t ceil_mode, node.attrs.get_int("ceil_mode", 0));
  HS_ASSIGN_OR_RETURN(const WindowGeometry g, geometry(graph, node, kernel, ceil_mode != 0));
  PoolParams p;
  p.window = to_window(g);
  const bool explicit_pads = any_padding(p.window);
  // Under ceil_mode the last window may reach past the end padding; pad
  // that far too so XNNPACK's floor-rounded output size comes out the same.
  const int64_t extra_h = std::max<int64_t>(
      0, (g.out_h - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h + 1 - (g.in_h + g.pad_top + g.pad_bottom));
  const int64_t extra_w = std::max<int64_t>(
      0, (g.out_w - 1) * g.stride_w + (g.kernel_w - 1) * g.dilation_w + 1 - (g.in_w + g.pad_left + g.pad_right));
  p.window.pad_bottom += static_cast<uint32_t>(extra_h);
  p.window.pad_right += static_cast<uint32_t>(extra_w);

  if (g.kernel_h * g.kernel_w == 1) return unsupported("XNNPACK rejects 1x1 pooling");
  if (is_max) {
    if ((g.dilation_h > 1 || g.dilation_w > 1) && any_padding(p.window))
      return unsupported(
          "dilated max pooling with padding: this XNNPACK clamps padded taps to the border, which can read pixels "
          "outside a dilated window");
    return p;
  }
  if (g.dilation_h > 1 || g.dilation_w > 1) return unsupported("XNNPACK's average pooling has no dilation");
  if (g.stride_h > g.kernel_h || g.stride_w > g.kernel_w)
    return unsupported("XNNPACK's average pooling rejects a stride larger than the window");
  HS_ASSIGN_OR_RETURN(const int64_t count_include_pad, node.attrs.get_int("count_include_pad", 0));
  if (count_include_pad != 0 && explicit_pads) {
    p.pre_top = static_cast<uint32_t>(g.pad_top);
    p.pre_left = static_cast<uint32_t>(g.pad_left);
    p.pre_bottom = static_cast<uint32_t>(g.pad_bottom);
    p.pre_right = static_cast<uint32_t>(g.pad_right);
    p.window.pad_top = p.window.pad_left = 0;
    p.window.pad_bottom = static_cast<uint32_t>(extra_h);
    p.window.pad_right = static_cast<uint32_t>(extra_w);
  }
  return p;
}

Result<Clamp> read_clamp(const Graph& graph, const Node& node) {
  Clamp c;
  if (node.op == "Relu") {
    c.min = 0.f;
    return c;
  }
  if (graph.opset() <= 10) {
    HS_ASSIGN_OR_RETURN(c.min, node.attrs.get_float("min", c.min));
    HS_ASSIGN_OR_RETURN(c.max, node.attrs.get_float("max", c.max));
  } else {
    HS_ASSIGN_OR_RETURN(c.min, scalar_bound(graph, node, 1, c.min));
    HS_ASSIGN_OR_RETURN(c.max, scalar_bound(graph, node, 2, c.max));
  }
  if (std::isnan(c.min) || std::isnan(c.max)) return unsupported("a NaN bound");
  // ONNX then makes every element max (numpy.clip); XNNPACK rejects the range.
  if (!(c.min < c.max))
    return unsupported("min " + std::to_string(c.min) + " >= max " + std::to_string(c.max) +
                       ": XNNPACK's clamp needs min < max");
  return c;
}

Result<ResizeParams> read_resize(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const std::string mode, node.attrs.get_string("mode", "nearest"));
  if (mode != "linear") return unsupported("mode '" + mode + "': this XNNPACK resizes bilinearly only");
  HS_ASSIGN_OR_RETURN(const int64_t antialias, node.attrs.get_int("antialias", 0));
  if (antialias != 0) return unsupported("antialias has no XNNPACK equivalent");
  HS_RETURN_IF_ERROR(read_resize_mapping(graph, node).status());  // H and W of rank 4, a mapping ONNX names
  const TensorType& x = input_type(graph, node, 0);
  const TensorType& y = output_type(graph, node);
  if (x.rank() != 4 || y.rank() != 4 || x.shape[0] != y.shape[0] || x.shape[1] != y.shape[1])
    return unsupported("only H and W of a rank-4 input are resized by XNNPACK, got " + x.to_string() + " -> " +
                       y.to_string());
  ResizeParams p;
  p.out_h = y.shape[2];
  p.out_w = y.shape[3];

  std::string transform = "asymmetric";  // Resize-10's only behaviour
  const Tensor* scales = constant_input(graph, node, graph.opset() < 11 ? 1 : 2);
  if (graph.opset() >= 11) {
    HS_ASSIGN_OR_RETURN(transform, node.attrs.get_string("coordinate_transformation_mode", "half_pixel"));
  }
  if (scales && scales->num_elements() == 0) scales = nullptr;
  if (scales) {
    // ONNX maps coordinates with the given scale; XNNPACK with
    // output/input size. They agree when the scale gives the size exactly.
    const std::vector<float> s = scales->to_float_vector();
    for (size_t d = 2; d < 4 && d < s.size(); ++d) {
      const double exact = static_cast<double>(y.shape[d]) / static_cast<double>(x.shape[d]);
      if (std::abs(static_cast<double>(s[d]) - exact) > 1e-6 * exact)
        return unsupported("scale " + std::to_string(s[d]) + " is not output/input size " + std::to_string(exact) +
                           ", from which XNNPACK derives its coordinates");
    }
  }
  if (transform == "half_pixel") {
    p.flags = 0;
  } else if (transform == "pytorch_half_pixel" || transform == "align_corners") {
    // Both special-case an output length of 1, which XNNPACK does not.
    if (p.out_h == 1 || p.out_w == 1)
      return unsupported("coordinate_transformation_mode '" + transform + "' with an output dim of 1");
    p.flags = transform == "align_corners" ? XNN_FLAG_ALIGN_CORNERS : 0;
  } else if (transform == "asymmetric") {
    p.flags = XNN_FLAG_TENSORFLOW_LEGACY_MODE;
  } else {
    return unsupported("coordinate_transformation_mode '" + transform + "' has no XNNPACK equivalent");
  }
  return p;
}

Result<FullyConnectedParams> read_fully_connected(const Graph& graph, const Node& node) {
  const TensorType& a = input_type(graph, node, 0);
  const Tensor* b = constant_input(graph, node, 1);
  if (!b) return unsupported("B is computed at run time; XNNPACK's fully connected op packs a constant B");
  if (b->dtype() != DType::kFloat32 || b->shape().size() != 2)
    return unsupported("B must be a 2-D f32 constant, got " + b->type().to_string());
  bool trans_b = false;
  float alpha = 1.f, beta = 1.f;
  if (node.op == "Gemm") {
    HS_ASSIGN_OR_RETURN(const int64_t trans_a, node.attrs.get_int("transA", 0));
    if (trans_a != 0) return unsupported("transA=1: XNNPACK reads A as [M, K]");
    HS_ASSIGN_OR_RETURN(const int64_t tb, node.attrs.get_int("transB", 0));
    trans_b = tb != 0;
    HS_ASSIGN_OR_RETURN(alpha, node.attrs.get_float("alpha", 1.f));
    HS_ASSIGN_OR_RETURN(beta, node.attrs.get_float("beta", 1.f));
    if (a.rank() != 2) return unsupported("Gemm's A must be 2-D, got " + a.to_string());
  } else if (a.rank() < 2) {
    return unsupported("a 1-D A drops a dim that XNNPACK's fully connected op keeps");
  }
  FullyConnectedParams p;
  p.input_channels = trans_b ? b->shape()[1] : b->shape()[0];
  p.output_channels = trans_b ? b->shape()[0] : b->shape()[1];
  if (a.shape.back() != p.input_channels)
    return invalid_argument("A " + a.to_string() + " and B " + b->type().to_string() + " differ in K");
  const int64_t k = p.input_channels, n = p.output_channels;
  const float* pb = b->data<float>();
  p.filter.resize(static_cast<size_t>(n * k));
  for (int64_t o = 0; o < n; ++o)
    for (int64_t i = 0; i < k; ++i) p.filter[o * k + i] = alpha * (trans_b ? pb[o * k + i] : pb[i * n + o]);

  p.bias.assign(static_cast<size_t>(n), 0.f);
  if (node.op == "Gemm" && node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    const Tensor* c = constant_input(graph, node, 2);
    if (!c) return unsupported("C is computed at run time; XNNPACK's bias is a constant");
    if (c->dtype() != DType::kFloat32) return unsupported("C must be f32, got " + c->type().to_string());
    const std::vector<float> cv = c->to_float_vector();
    // XNNPACK adds one bias per output channel: C may vary along N only.
    const int64_t rows = c->num_elements() == 1 ? 1 : c->num_elements() / std::max<int64_t>(c->shape().back(), 1);
    if (rows != 1 || (c->num_elements() != 1 && c->shape().back() != n))
      return unsupported("C " + c->type().to_string() + " varies along M; XNNPACK's bias is per output channel");
    for (int64_t o = 0; o < n; ++o) p.bias[o] = beta * cv[c->num_elements() == 1 ? 0 : o];
  }
  return p;
}

Result<ChannelAffine> read_batch_norm(const Graph& graph, const Node& node) {
  if (node.outputs.size() > 1) return unsupported("training-mode outputs have no XNNPACK equivalent");
  const TensorType& x = input_type(graph, node, 0);
  if (x.rank() < 2) return invalid_argument("X must have a channel dim, got " + x.to_string());
  const int64_t channels = x.shape[1];
  HS_ASSIGN_OR_RETURN(const float* gamma, channel_constant(graph, node, 1, channels, "scale"));
  HS_ASSIGN_OR_RETURN(const float* beta, channel_constant(graph, node, 2, channels, "B"));
  HS_ASSIGN_OR_RETURN(const float* mean, channel_constant(graph, node, 3, channels, "input_mean"));
  HS_ASSIGN_OR_RETURN(const float* var, channel_constant(graph, node, 4, channels, "input_var"));
  HS_ASSIGN_OR_RETURN(const float epsilon, node.attrs.get_float("epsilon", 1e-5f));
  ChannelAffine a;
  a.scale.resize(static_cast<size_t>(channels));
  a.shift.resize(static_cast<size_t>(channels));
  // The portable kernel's arithmetic, so folding changes nothing but order.
  for (int64_t c = 0; c < channels; ++c) {
    a.scale[c] = gamma[c] / std::sqrt(var[c] + epsilon);
    a.shift[c] = beta[c] - mean[c] * a.scale[c];
  }
  return a;
}

Result<ChannelAffine> read_hard_sigmoid(const Node& node) {
  HS_ASSIGN_OR_RETURN(const float alpha, node.attrs.get_float("alpha", 0.2f));
  HS_ASSIGN_OR_RETURN(const float beta, node.attrs.get_float("beta", 0.5f));
  if (!std::isfinite(alpha) || !std::isfinite(beta)) return unsupported("a non-finite alpha or beta");
  return ChannelAffine{{alpha}, {beta}};
}

Result<PadParams> read_pad(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const std::string mode, node.attrs.get_string("mode", "constant"));
  if (mode != "constant") return unsupported("mode '" + mode + "': XNNPACK pads with a constant only");
  const size_t rank = input_type(graph, node, 0).rank();
  std::vector<int64_t> pads;
  float value = 0.f;
  if (graph.opset() < 11) {
    HS_ASSIGN_OR_RETURN(pads, node.attrs.require_ints("pads"));
    HS_ASSIGN_OR_RETURN(value, node.attrs.get_float("value", 0.f));
  } else {
    if (node.inputs.size() > 3 && node.inputs[3] != kNoValue)
      return unsupported("the axes input is not mapped to XNNPACK");
    const Tensor* p = constant_input(graph, node, 1);
    if (!p) return unsupported("pads are computed at run time; XNNPACK's pad is static");
    pads = p->to_int64_vector();
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      const Tensor* v = constant_input(graph, node, 2);
      if (!v || v->dtype() != DType::kFloat32 || v->num_elements() != 1)
        return unsupported("constant_value must be a constant f32 scalar");
      value = v->data<float>()[0];
    }
  }
  if (pads.size() != 2 * rank)
    return invalid_argument("pads has " + std::to_string(pads.size()) + " values for rank " + std::to_string(rank));
  PadParams p;
  p.value = value;
  for (size_t d = 0; d < rank; ++d) {
    if (pads[d] < 0 || pads[rank + d] < 0) return unsupported("negative pads crop, which XNNPACK's pad does not");
    p.before.push_back(static_cast<size_t>(pads[d]));
    p.after.push_back(static_cast<size_t>(pads[rank + d]));
  }
  return p;
}

Result<std::vector<float>> read_prelu_slopes(const Graph& graph, const Node& node) {
  const TensorType& x = input_type(graph, node, 0);
  if (x.rank() != 4) return unsupported("XNNPACK's PReLU takes a rank-4 X only, got " + x.to_string());
  const Tensor* slope = constant_input(graph, node, 1);
  if (!slope) return unsupported("the slope is computed at run time; XNNPACK's PReLU packs a constant");
  // One slope per channel: [C], [C,1,1] or [1,C,1,1] in ONNX's broadcasting.
  const Shape padded = [&] {
    Shape s(4 - std::min<size_t>(4, slope->shape().size()), 1);
    s.insert(s.end(), slope->shape().begin(), slope->shape().end());
    return s;
  }();
  const int64_t channels = x.shape[1];
  const bool per_channel = padded.size() == 4 && padded[0] == 1 && padded[1] == channels && padded[2] == 1 &&
                           padded[3] == 1;
  const bool shared = slope->num_elements() == 1;
  if (slope->dtype() != DType::kFloat32 || (!per_channel && !shared))
    return unsupported("slope " + slope->type().to_string() + " is not one per channel, as XNNPACK's PReLU needs");
  std::vector<float> v = slope->to_float_vector();
  if (shared) v.assign(static_cast<size_t>(channels), v[0]);
  return v;
}

Result<bool> read_spatial_mean(const Graph& graph, const Node& node) {
  const TensorType& x = input_type(graph, node, 0);
  if (x.rank() != 4) return unsupported("only ReduceMean of a rank-4 X over H and W maps to XNNPACK, got X " + x.to_string());
  const bool has_axes = node.inputs.size() > 1 && node.inputs[1] != kNoValue;
  const Tensor* axes = constant_input(graph, node, 1);
  if (has_axes && !axes) return unsupported("the axes are computed at run time");
  HS_ASSIGN_OR_RETURN(const ReduceParams p,
                      reduce_params(node.op, node.attrs, graph.opset(), x.shape, has_axes, axes));
  if (p.noop || p.reduced != std::vector<bool>{false, false, true, true})
    return unsupported("only ReduceMean over H and W (axes 2 and 3) maps to XNNPACK's global average pooling");
  return p.keepdims;
}

}  // namespace hetsched::cpu::xnnpack
