#include "delegates/cpu/xnnpack/lowering.h"

#include <array>
#include <cstring>
#include <limits>
#include <string>

#include "delegates/cpu/xnnpack/layout_convert.h"
#include "delegates/cpu/xnnpack/op_params.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"

namespace hetsched::cpu::xnnpack {

namespace {

constexpr float kNoMin = -std::numeric_limits<float>::infinity();
constexpr float kNoMax = std::numeric_limits<float>::infinity();

std::vector<size_t> to_dims(const Shape& shape) { return std::vector<size_t>(shape.begin(), shape.end()); }

// `shape` right-aligned to rank 4 with leading 1s.
Shape pad_to_rank4(const Shape& shape) {
  Shape s(4 - shape.size(), 1);
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

}  // namespace

TensorLayout SubgraphLowering::layout_of(ValueId value) const {
  auto it = step_.layouts.find(value);
  return it == step_.layouts.end() ? TensorLayout::kNchw : it->second;
}

std::vector<size_t> SubgraphLowering::dims_of(ValueId value) const {
  const Shape& s = graph_.value(value).type.shape;
  if (layout_of(value) == TensorLayout::kNhwc) return {size_t(s[0]), size_t(s[2]), size_t(s[3]), size_t(s[1])};
  return to_dims(s);
}

Status SubgraphLowering::define_external(ValueId value, uint32_t id, uint32_t flags) {
  const std::vector<size_t> dims = dims_of(value);
  uint32_t out_id = XNN_INVALID_VALUE_ID;
  HS_RETURN_IF_ERROR(check_xnn(xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, dims.size(), dims.data(),
                                                       nullptr, id, flags, &out_id),
                               "xnn_define_tensor_value"));
  ids_[value] = out_id;
  return Status::ok();
}

Result<uint32_t> SubgraphLowering::activation(ValueId value) {
  auto it = ids_.find(value);
  if (it != ids_.end()) return it->second;
  const std::vector<size_t> dims = dims_of(value);
  HS_ASSIGN_OR_RETURN(const uint32_t id, internal_value(dims));
  ids_[value] = id;
  return id;
}

Result<uint32_t> SubgraphLowering::internal_value(const std::vector<size_t>& dims) {
  uint32_t id = XNN_INVALID_VALUE_ID;
  HS_RETURN_IF_ERROR(check_xnn(xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, dims.size(), dims.data(),
                                                       nullptr, XNN_INVALID_VALUE_ID, 0, &id),
                               "xnn_define_tensor_value"));
  return id;
}

Result<uint32_t> SubgraphLowering::static_value(const std::vector<float>& data, const std::vector<size_t>& dims,
                                                bool packed) {
  const size_t bytes = data.size() * sizeof(float);
  AlignedBuffer buffer(bytes + XNN_EXTRA_BYTES);
  std::memcpy(buffer.data(), data.data(), bytes);
  uint32_t id = XNN_INVALID_VALUE_ID;
  HS_RETURN_IF_ERROR(check_xnn(xnn_define_tensor_value(subgraph_, xnn_datatype_fp32, dims.size(), dims.data(),
                                                       buffer.data(), XNN_INVALID_VALUE_ID, 0, &id),
                               "xnn_define_tensor_value"));
  (packed ? packed_weights_ : static_data_).push_back(std::move(buffer));
  return id;
}

Result<uint32_t> SubgraphLowering::operand(ValueId value, ValueId output) {
  const Value& v = graph_.value(value);
  if (!v.is_constant()) return activation(value);
  const Tensor& t = *v.constant;
  std::vector<float> data = t.to_float_vector();
  if (data.empty()) data.push_back(0.f);
  Shape shape = t.shape();
  if (shape.empty()) shape = {1};
  // Broadcasting right-aligns dims, so an operand of an NHWC output is
  // padded to rank 4 and its C moved last like the output's.
  if (layout_of(output) == TensorLayout::kNhwc && shape.size() <= 4) {
    const Shape s = pad_to_rank4(shape);
    std::vector<float> relaid(data.size());
    nchw_to_nhwc(data.data(), relaid.data(), s[0], s[1], s[2] * s[3]);
    return static_value(relaid, {size_t(s[0]), size_t(s[2]), size_t(s[3]), size_t(s[1])});
  }
  return static_value(data, to_dims(shape));
}

NodeId SubgraphLowering::foldable_batch_norm(const Node& conv) const {
  // The normalisation would land before the activation instead of after it.
  if (conv.attrs.has(kActivationAttr)) return kNoNode;
  const ValueId y = conv.outputs[0];
  for (ValueId out : step_.outputs)
    if (out == y) return kNoNode;  // the unfolded conv output is needed outside
  const std::vector<NodeId> consumers = graph_.consumers(y);
  if (consumers.size() != 1) return kNoNode;
  const Node& bn = graph_.node(consumers[0]);
  if (bn.op != "BatchNormalization" || bn.inputs[0] != y) return kNoNode;
  bool in_step = false;
  for (NodeId n : step_.nodes) in_step = in_step || n == consumers[0];
  return in_step ? consumers[0] : kNoNode;
}

Status SubgraphLowering::define_nodes() {
  folded_.assign(graph_.num_nodes(), false);
  for (NodeId id : step_.nodes) {
    if (folded_[id]) continue;
    Status s = define_node(id);
    if (!s.is_ok()) return s.with_context(graph_.describe_node(id) + ": ");
  }
  return Status::ok();
}

Status SubgraphLowering::define_node(NodeId id) {
  const Node& node = graph_.node(id);
  const std::string& op = node.op;
  if (op == "Conv") {
    const NodeId bn = foldable_batch_norm(node);
    if (bn != kNoNode) folded_[bn] = true;
    return define_conv(node, bn);
  }
  if (op == "ConvTranspose") return define_conv_transpose(node);
  if (op == "MaxPool" || op == "AveragePool") return define_pool(node);
  if (op == "GlobalAveragePool") return define_global_average_pool(node);
  if (op == "ReduceMean") return define_spatial_mean(node);
  if (op == "Resize") return define_resize(node);
  if (op == "Gemm" || op == "MatMul") return define_fully_connected(node);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min" || op == "Sum")
    return define_binary(node);
  if (op == "Pad") return define_pad(node);
  if (op == "PRelu") return define_prelu(node);
  if (op == "Softmax") return define_softmax(node);
  if (op == "BatchNormalization") return define_batch_norm(node);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity")
    return define_reshape(node);
  return define_unary(node);
}

Status SubgraphLowering::define_conv(const Node& node, NodeId folded_bn) {
  HS_ASSIGN_OR_RETURN(const ConvParams p, read_conv(graph_, node));
  const Tensor& w = *constant_input(graph_, node, 1);
  const int64_t m = p.out_channels;
  const int64_t group_in = p.in_channels / p.groups;
  const int64_t taps = w.shape()[2] * w.shape()[3];
  const std::vector<float> oihw = w.to_float_vector();
  std::vector<float> filter(oihw.size());
  // Depthwise: O,1,H,W -> 1,H,W,O (one image of O channels). Otherwise
  // O,I,H,W -> O,H,W,I (O images of I channels).
  if (p.depthwise)
    nchw_to_nhwc(oihw.data(), filter.data(), 1, m, taps);
  else
    nchw_to_nhwc(oihw.data(), filter.data(), m, group_in, taps);
  std::vector<float> bias(static_cast<size_t>(m), 0.f);
  if (const Tensor* b = constant_input(graph_, node, 2)) bias = b->to_float_vector();

  ValueId output = node.outputs[0];
  if (folded_bn != kNoNode) {
    const Node& bn = graph_.node(folded_bn);
    HS_ASSIGN_OR_RETURN(const ChannelAffine a, read_batch_norm(graph_, bn));
    for (size_t i = 0; i < filter.size(); ++i) {
      const size_t channel = p.depthwise ? i % static_cast<size_t>(m) : i / static_cast<size_t>(group_in * taps);
      filter[i] *= a.scale[channel];
    }
    for (int64_t c = 0; c < m; ++c) bias[c] = bias[c] * a.scale[c] + a.shift[c];
    output = bn.outputs[0];
  }
  // alpha * (w . x + b) + beta computed as (alpha w) . x + (alpha b + beta).
  if (p.out_scale != 1.f || p.out_shift != 0.f) {
    for (float& f : filter) f *= p.out_scale;
    for (float& b : bias) b = b * p.out_scale + p.out_shift;
  }

  HS_ASSIGN_OR_RETURN(const uint32_t input_id, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t final_id, activation(output));
  // With an activation of its own after it, the convolution writes an
  // internal value that the activation node reads.
  uint32_t output_id = final_id;
  if (p.then.kind != FusedActivation::Kind::kNone) {
    HS_ASSIGN_OR_RETURN(output_id, internal_value(dims_of(output)));
  }
  HS_RETURN_IF_ERROR(define_conv_core(p, input_id, output_id, std::move(filter), std::move(bias)));
  switch (p.then.kind) {
    case FusedActivation::Kind::kSigmoid:
      return check_xnn(xnn_define_sigmoid(subgraph_, output_id, final_id, 0), "xnn_define_sigmoid");
    case FusedActivation::Kind::kHardSwish:
      return check_xnn(xnn_define_hardswish(subgraph_, output_id, final_id, 0), "xnn_define_hardswish");
    case FusedActivation::Kind::kLeakyRelu:
      return check_xnn(xnn_define_leaky_relu(subgraph_, p.then.alpha, output_id, final_id, 0),
                       "xnn_define_leaky_relu");
    default:
      return Status::ok();
  }
}

Status SubgraphLowering::define_conv_core(const ConvParams& p, uint32_t input_id, uint32_t output_id,
                                          std::vector<float> filter, std::vector<float> bias) {
  const int64_t m = p.out_channels;
  const int64_t group_in = p.in_channels / p.groups;
  const Window2d& win = p.window;
  if (p.depthwise) {
    HS_ASSIGN_OR_RETURN(const uint32_t filter_id,
                        packed_weight(filter, {1, win.kernel_h, win.kernel_w, size_t(m)}));
    HS_ASSIGN_OR_RETURN(const uint32_t bias_id, packed_weight(bias, {size_t(m)}));
    return check_xnn(xnn_define_depthwise_convolution_2d(
                         subgraph_, win.pad_top, win.pad_right, win.pad_bottom, win.pad_left, win.kernel_h,
                         win.kernel_w, win.stride_h, win.stride_w, win.dilation_h, win.dilation_w,
                         static_cast<uint32_t>(m / p.in_channels), static_cast<size_t>(p.in_channels), p.clamp.min,
                         p.clamp.max, input_id, filter_id, bias_id, output_id, 0),
                     "xnn_define_depthwise_convolution_2d");
  }
  HS_ASSIGN_OR_RETURN(const uint32_t filter_id,
                      packed_weight(filter, {size_t(m), win.kernel_h, win.kernel_w, size_t(group_in)}));
  HS_ASSIGN_OR_RETURN(const uint32_t bias_id, packed_weight(bias, {size_t(m)}));
  return check_xnn(
      xnn_define_convolution_2d(subgraph_, win.pad_top, win.pad_right, win.pad_bottom, win.pad_left, win.kernel_h,
                                win.kernel_w, win.stride_h, win.stride_w, win.dilation_h, win.dilation_w,
                                static_cast<uint32_t>(p.groups), static_cast<size_t>(group_in),
                                static_cast<size_t>(m / p.groups), p.clamp.min, p.clamp.max, input_id, filter_id,
                                bias_id, output_id, 0),
      "xnn_define_convolution_2d");
}

Status SubgraphLowering::define_conv_transpose(const Node& node) {
  HS_ASSIGN_OR_RETURN(const ConvTransposeParams p, read_conv_transpose(graph_, node));
  const Window2d& win = p.window;
  HS_ASSIGN_OR_RETURN(const uint32_t input_id, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t output_id, activation(node.outputs[0]));
  const bool blocks = p.groups == 1 && win.kernel_h == win.stride_h && win.kernel_w == win.stride_w &&
                      win.kernel_h == win.kernel_w && win.kernel_h > 1 && win.dilation_h == 1 && win.dilation_w == 1 &&
                      win.pad_top == 0 && win.pad_left == 0 && win.pad_bottom == 0 && win.pad_right == 0 &&
                      p.adjustment_h == 0 && p.adjustment_w == 0;
  if (blocks) {
    // Kernel = stride, no padding: every input pixel writes its own
    // s x s block, which is a 1x1 convolution to s*s*M channels, then
    // depth_to_space. XNNPACK's deconvolution runs this case several
    // times slower (PP-OCR's DB head: M = 1 and 24).
    const size_t k = win.kernel_h, m = static_cast<size_t>(p.group_out), c = static_cast<size_t>(p.group_in);
    std::vector<float> filter(k * k * m * c), bias(k * k * m);
    // p.filter is [m][by][bx][c]; the convolution's output channel is (by*k+bx)*M + m.
    for (size_t o = 0; o < m; ++o)
      for (size_t t = 0; t < k * k; ++t) {
        bias[t * m + o] = p.bias[o];
        for (size_t i = 0; i < c; ++i) filter[(t * m + o) * c + i] = p.filter[(o * k * k + t) * c + i];
      }
    std::vector<size_t> dims = dims_of(node.inputs[0]);
    dims[3] = k * k * m;
    HS_ASSIGN_OR_RETURN(const uint32_t spread_id, internal_value(dims));
    HS_ASSIGN_OR_RETURN(const uint32_t filter_id, packed_weight(filter, {k * k * m, 1, 1, c}));
    HS_ASSIGN_OR_RETURN(const uint32_t bias_id, packed_weight(bias, {k * k * m}));
    HS_RETURN_IF_ERROR(check_xnn(xnn_define_convolution_2d(subgraph_, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, c, k * k * m,
                                                           kNoMin, kNoMax, input_id, filter_id, bias_id, spread_id, 0),
                                 "xnn_define_convolution_2d"));
    return check_xnn(xnn_define_depth_to_space(subgraph_, spread_id, output_id, static_cast<uint32_t>(k), 0),
                     "xnn_define_depth_to_space");
  }
  HS_ASSIGN_OR_RETURN(const uint32_t filter_id,
                      packed_weight(p.filter, {size_t(p.groups * p.group_out), win.kernel_h, win.kernel_w,
                                              size_t(p.group_in)}));
  HS_ASSIGN_OR_RETURN(const uint32_t bias_id, packed_weight(p.bias, {p.bias.size()}));
  return check_xnn(xnn_define_deconvolution_2d(subgraph_, win.pad_top, win.pad_right, win.pad_bottom, win.pad_left,
                                               p.adjustment_h, p.adjustment_w, win.kernel_h, win.kernel_w,
                                               win.stride_h, win.stride_w, win.dilation_h, win.dilation_w,
                                               static_cast<uint32_t>(p.groups), static_cast<size_t>(p.group_in),
                                               static_cast<size_t>(p.group_out), kNoMin, kNoMax, input_id, filter_id,
                                               bias_id, output_id, 0),
                   "xnn_define_deconvolution_2d");
}

Status SubgraphLowering::define_pool(const Node& node) {
  HS_ASSIGN_OR_RETURN(const PoolParams p, read_pool(graph_, node));
  HS_ASSIGN_OR_RETURN(const uint32_t input_id, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t output_id, activation(node.outputs[0]));
  const Window2d& w = p.window;
  if (node.op == "MaxPool")
    return check_xnn(xnn_define_max_pooling_2d(subgraph_, w.pad_top, w.pad_right, w.pad_bottom, w.pad_left,
                                               w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.dilation_h,
                                               w.dilation_w, kNoMin, kNoMax, input_id, output_id, 0),
                     "xnn_define_max_pooling_2d");
  uint32_t pooled_id = input_id;
  if (p.pad_first()) {
    // XNNPACK's N,H,W,C, as the pool reads it.
    std::vector<size_t> dims = dims_of(node.inputs[0]);
    const std::array<size_t, 4> before{0, p.pre_top, p.pre_left, 0}, after{0, p.pre_bottom, p.pre_right, 0};
    dims[1] += p.pre_top + p.pre_bottom;
    dims[2] += p.pre_left + p.pre_right;
    HS_ASSIGN_OR_RETURN(pooled_id, internal_value(dims));
    HS_RETURN_IF_ERROR(check_xnn(
        xnn_define_static_constant_pad(subgraph_, before.data(), after.data(), 0.f, input_id, pooled_id, 0),
        "xnn_define_static_constant_pad"));
  }
  return check_xnn(xnn_define_average_pooling_2d(subgraph_, w.pad_top, w.pad_right, w.pad_bottom, w.pad_left,
                                                 w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, kNoMin, kNoMax,
                                                 pooled_id, output_id, 0),
                   "xnn_define_average_pooling_2d");
}

Status SubgraphLowering::define_global_average_pool(const Node& node) {
  HS_ASSIGN_OR_RETURN(const uint32_t input_id, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t output_id, activation(node.outputs[0]));
  return check_xnn(xnn_define_global_average_pooling_2d(subgraph_, kNoMin, kNoMax, input_id, output_id, 0),
                   "xnn_define_global_average_pooling_2d");
}

Status SubgraphLowering::define_spatial_mean(const Node& node) {
  HS_ASSIGN_OR_RETURN(const bool keepdims, read_spatial_mean(graph_, node));
  if (keepdims) return define_global_average_pool(node);
  // XNNPACK pools into [N,1,1,C]; [N,C] is the same bytes.
  const TensorType& x = graph_.value(node.inputs[0]).type;
  const size_t n = static_cast<size_t>(x.shape[0]), c = static_cast<size_t>(x.shape[1]);
  HS_ASSIGN_OR_RETURN(const uint32_t input_id, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t pooled, internal_value({n, 1, 1, c}));
  HS_ASSIGN_OR_RETURN(const uint32_t output_id, activation(node.outputs[0]));
  HS_RETURN_IF_ERROR(check_xnn(xnn_define_global_average_pooling_2d(subgraph_, kNoMin, kNoMax, input_id, pooled, 0),
                               "xnn_define_global_average_pooling_2d"));
  const std::vector<size_t> dims = dims_of(node.outputs[0]);
  return check_xnn(xnn_define_static_reshape(subgraph_, dims.size(), dims.data(), pooled, output_id, 0),
                   "xnn_define_static_reshape");
}

Status SubgraphLowering::define_resize(const Node& node) {
  HS_ASSIGN_OR_RETURN(const ResizeParams p, read_resize(graph_, node));
  HS_ASSIGN_OR_RETURN(const uint32_t input_id, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t output_id, activation(node.outputs[0]));
  return check_xnn(xnn_define_static_resize_bilinear_2d(subgraph_, static_cast<size_t>(p.out_h),
                                                        static_cast<size_t>(p.out_w), input_id, output_id, p.flags),
                   "xnn_define_static_resize_bilinear_2d");
}

Status SubgraphLowering::define_fully_connected(const Node& node) {
  HS_ASSIGN_OR_RETURN(const FullyConnectedParams p, read_fully_connected(graph_, node));
  HS_ASSIGN_OR_RETURN(const uint32_t input_id, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t output_id, activation(node.outputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t filter_id,
                      packed_weight(p.filter, {size_t(p.output_channels), size_t(p.input_channels)}));
  HS_ASSIGN_OR_RETURN(const uint32_t bias_id, packed_weight(p.bias, {size_t(p.output_channels)}));
  return check_xnn(
      xnn_define_fully_connected(subgraph_, kNoMin, kNoMax, input_id, filter_id, bias_id, output_id, 0),
      "xnn_define_fully_connected");
}

Status SubgraphLowering::define_binary(const Node& node) {
  const ValueId out = node.outputs[0];
  HS_ASSIGN_OR_RETURN(const uint32_t a, operand(node.inputs[0], out));
  HS_ASSIGN_OR_RETURN(const uint32_t b, operand(node.inputs[1], out));
  HS_ASSIGN_OR_RETURN(const uint32_t y, activation(out));
  if (node.op == "Add" || node.op == "Sum")
    return check_xnn(xnn_define_add2(subgraph_, kNoMin, kNoMax, a, b, y, 0), "xnn_define_add2");
  if (node.op == "Max") return check_xnn(xnn_define_maximum2(subgraph_, a, b, y, 0), "xnn_define_maximum2");
  if (node.op == "Min") return check_xnn(xnn_define_minimum2(subgraph_, a, b, y, 0), "xnn_define_minimum2");
  if (node.op == "Sub")
    return check_xnn(xnn_define_subtract(subgraph_, kNoMin, kNoMax, a, b, y, 0), "xnn_define_subtract");
  if (node.op == "Mul")
    return check_xnn(xnn_define_multiply2(subgraph_, kNoMin, kNoMax, a, b, y, 0), "xnn_define_multiply2");
  return check_xnn(xnn_define_divide(subgraph_, kNoMin, kNoMax, a, b, y, 0), "xnn_define_divide");
}

Status SubgraphLowering::define_unary(const Node& node) {
  HS_ASSIGN_OR_RETURN(const uint32_t x, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t y, activation(node.outputs[0]));
  const std::string& op = node.op;
  if (op == "Relu" || op == "Clip") {
    HS_ASSIGN_OR_RETURN(const Clamp c, read_clamp(graph_, node));
    return check_xnn(xnn_define_clamp(subgraph_, c.min, c.max, x, y, 0), "xnn_define_clamp");
  }
  if (op == "Sigmoid") return check_xnn(xnn_define_sigmoid(subgraph_, x, y, 0), "xnn_define_sigmoid");
  if (op == "HardSwish") return check_xnn(xnn_define_hardswish(subgraph_, x, y, 0), "xnn_define_hardswish");
  if (op == "Abs") return check_xnn(xnn_define_abs(subgraph_, x, y, 0), "xnn_define_abs");
  if (op == "Neg") return check_xnn(xnn_define_negate(subgraph_, x, y, 0), "xnn_define_negate");
  if (op == "Sqrt") return check_xnn(xnn_define_square_root(subgraph_, x, y, 0), "xnn_define_square_root");
  if (op == "Floor") return check_xnn(xnn_define_floor(subgraph_, x, y, 0), "xnn_define_floor");
  if (op == "Ceil") return check_xnn(xnn_define_ceiling(subgraph_, x, y, 0), "xnn_define_ceiling");
  // ONNX Round rounds halves to even, as XNNPACK's bankers' rounding.
  if (op == "Round") return check_xnn(xnn_define_bankers_rounding(subgraph_, x, y, 0), "xnn_define_bankers_rounding");
  if (op == "HardSigmoid") {
    HS_ASSIGN_OR_RETURN(const ChannelAffine a, read_hard_sigmoid(node));
    HS_ASSIGN_OR_RETURN(const uint32_t alpha, static_value(a.scale, {1}));
    HS_ASSIGN_OR_RETURN(const uint32_t beta, static_value(a.shift, {1}));
    HS_ASSIGN_OR_RETURN(const uint32_t scaled, internal_value(dims_of(node.outputs[0])));
    HS_RETURN_IF_ERROR(
        check_xnn(xnn_define_multiply2(subgraph_, kNoMin, kNoMax, x, alpha, scaled, 0), "xnn_define_multiply2"));
    return check_xnn(xnn_define_add2(subgraph_, 0.f, 1.f, scaled, beta, y, 0), "xnn_define_add2");
  }
  if (op == "LeakyRelu") {
    HS_ASSIGN_OR_RETURN(const float alpha, node.attrs.get_float("alpha", 0.01f));
    return check_xnn(xnn_define_leaky_relu(subgraph_, alpha, x, y, 0), "xnn_define_leaky_relu");
  }
  return unsupported("no XNNPACK lowering for op " + op);
}

Status SubgraphLowering::define_softmax(const Node& node) {
  HS_ASSIGN_OR_RETURN(const uint32_t x, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t y, activation(node.outputs[0]));
  return check_xnn(xnn_define_softmax(subgraph_, x, y, 0), "xnn_define_softmax");
}

// y = x * scale + shift per channel, as two XNNPACK nodes. The channel
// constants broadcast along C: last in NHWC, dim 1 in the graph's order.
Status SubgraphLowering::define_batch_norm(const Node& node) {
  HS_ASSIGN_OR_RETURN(const ChannelAffine a, read_batch_norm(graph_, node));
  const ValueId x_value = node.inputs[0];
  std::vector<size_t> channel_dims{a.scale.size()};
  if (layout_of(x_value) == TensorLayout::kNchw)
    channel_dims.resize(graph_.value(x_value).type.rank() - 1, 1);
  HS_ASSIGN_OR_RETURN(const uint32_t x, activation(x_value));
  HS_ASSIGN_OR_RETURN(const uint32_t scale, static_value(a.scale, channel_dims));
  HS_ASSIGN_OR_RETURN(const uint32_t shift, static_value(a.shift, channel_dims));
  HS_ASSIGN_OR_RETURN(const uint32_t scaled, internal_value(dims_of(node.outputs[0])));
  HS_ASSIGN_OR_RETURN(const uint32_t y, activation(node.outputs[0]));
  HS_RETURN_IF_ERROR(
      check_xnn(xnn_define_multiply2(subgraph_, kNoMin, kNoMax, x, scale, scaled, 0), "xnn_define_multiply2"));
  return check_xnn(xnn_define_add2(subgraph_, kNoMin, kNoMax, scaled, shift, y, 0), "xnn_define_add2");
}

Status SubgraphLowering::define_pad(const Node& node) {
  HS_ASSIGN_OR_RETURN(PadParams p, read_pad(graph_, node));
  if (layout_of(node.inputs[0]) == TensorLayout::kNhwc) {
    // Graph order N,C,H,W -> XNNPACK's N,H,W,C.
    p.before = {p.before[0], p.before[2], p.before[3], p.before[1]};
    p.after = {p.after[0], p.after[2], p.after[3], p.after[1]};
  }
  HS_ASSIGN_OR_RETURN(const uint32_t x, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t y, activation(node.outputs[0]));
  return check_xnn(xnn_define_static_constant_pad(subgraph_, p.before.data(), p.after.data(), p.value, x, y, 0),
                   "xnn_define_static_constant_pad");
}

Status SubgraphLowering::define_prelu(const Node& node) {
  HS_ASSIGN_OR_RETURN(const std::vector<float> slopes, read_prelu_slopes(graph_, node));
  HS_ASSIGN_OR_RETURN(const uint32_t x, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t slope, static_value(slopes, {slopes.size()}));
  HS_ASSIGN_OR_RETURN(const uint32_t y, activation(node.outputs[0]));
  return check_xnn(xnn_define_prelu(subgraph_, x, slope, y, 0), "xnn_define_prelu");
}

Status SubgraphLowering::define_reshape(const Node& node) {
  HS_ASSIGN_OR_RETURN(const uint32_t x, activation(node.inputs[0]));
  HS_ASSIGN_OR_RETURN(const uint32_t y, activation(node.outputs[0]));
  const std::vector<size_t> dims = dims_of(node.outputs[0]);
  return check_xnn(xnn_define_static_reshape(subgraph_, dims.size(), dims.data(), x, y, 0),
                   "xnn_define_static_reshape");
}

}  // namespace hetsched::cpu::xnnpack
