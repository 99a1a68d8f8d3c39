#include "delegates/cpu/xnnpack/nhwc_ops.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "graph/op_schema.h"
#include "graph/resize_taps.h"

namespace hetsched::cpu::xnnpack {

namespace {

constexpr int64_t kPixelBlock = 256;

bool is_f32_rank4(const Graph& graph, ValueId v) {
  const Value& value = graph.value(v);
  return value.type_known && value.type.is_static() && value.type.dtype == DType::kFloat32 && value.type.rank() == 4;
}

struct ResizeMapping {
  ResizeTransform transform = ResizeTransform::kHalfPixel;
  ResizeRounding rounding = ResizeRounding::kRoundPreferFloor;
  double scale_h = 1.0, scale_w = 1.0;
};

Result<ResizeMapping> read_nearest(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const std::string mode, node.attrs.get_string("mode", "nearest"));
  if (mode != "nearest") return unsupported("mode '" + mode + "' has no NHWC kernel");
  if (graph.opset() < 11) return unsupported("Resize before opset 11 has no NHWC kernel");
  const ValueId x = node.inputs[0], y = node.outputs[0];
  if (!is_f32_rank4(graph, x) || !is_f32_rank4(graph, y)) return unsupported("only rank-4 f32 has an NHWC kernel");
  const Shape& xs = graph.value(x).type.shape;
  const Shape& ys = graph.value(y).type.shape;
  if (xs[0] != ys[0] || xs[1] != ys[1]) return unsupported("only H and W are resized by the NHWC kernel");
  if (xs[2] == 0 || xs[3] == 0) return unsupported("an empty input");
  ResizeMapping m;
  HS_ASSIGN_OR_RETURN(const std::string transform,
                      node.attrs.get_string("coordinate_transformation_mode", "half_pixel"));
  HS_ASSIGN_OR_RETURN(const std::string rounding, node.attrs.get_string("nearest_mode", "round_prefer_floor"));
  if (transform == "half_pixel") m.transform = ResizeTransform::kHalfPixel;
  else if (transform == "asymmetric") m.transform = ResizeTransform::kAsymmetric;
  else if (transform == "align_corners") m.transform = ResizeTransform::kAlignCorners;
  else if (transform == "pytorch_half_pixel") m.transform = ResizeTransform::kPytorchHalfPixel;
  else if (transform == "tf_half_pixel_for_nearest") m.transform = ResizeTransform::kTfHalfPixelForNearest;
  else return unsupported("coordinate_transformation_mode '" + transform + "' has no NHWC kernel");
  if (rounding == "round_prefer_floor") m.rounding = ResizeRounding::kRoundPreferFloor;
  else if (rounding == "round_prefer_ceil") m.rounding = ResizeRounding::kRoundPreferCeil;
  else if (rounding == "floor") m.rounding = ResizeRounding::kFloor;
  else if (rounding == "ceil") m.rounding = ResizeRounding::kCeil;
  else return unsupported("nearest_mode '" + rounding + "' has no NHWC kernel");
  const Value* scales = node.inputs.size() > 2 && node.inputs[2] != kNoValue ? &graph.value(node.inputs[2]) : nullptr;
  if (scales && (!scales->is_constant() || scales->constant->num_elements() == 0)) scales = nullptr;
  if (scales) {
    if (scales->constant->dtype() != DType::kFloat32 || scales->constant->num_elements() != 4)
      return unsupported("scales that are not 4 f32 values");
    m.scale_h = scales->constant->data<float>()[2];
    m.scale_w = scales->constant->data<float>()[3];
  } else {
    m.scale_h = static_cast<double>(ys[2]) / static_cast<double>(xs[2]);
    m.scale_w = static_cast<double>(ys[3]) / static_cast<double>(xs[3]);
  }
  if (!(m.scale_h > 0.0) || !(m.scale_w > 0.0)) return unsupported("scales that are not positive");
  return m;
}

Result<int64_t> concat_axis(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, node.attrs.require_int("axis"));
  return normalize_axis(attr_axis, 4);
}

}  // namespace

Status nhwc_kernel_supports(const Graph& graph, const Node& node) {
  if (node.outputs.size() != 1) return unsupported("not one output");
  if (node.op == "Resize") {
    if (node.inputs.empty() || node.inputs[0] == kNoValue || graph.value(node.inputs[0]).is_constant())
      return unsupported("no run-time input");
    return read_nearest(graph, node).status();
  }
  if (node.op != "Concat") return unsupported("op " + node.op + " has no NHWC kernel");
  if (!is_f32_rank4(graph, node.outputs[0])) return unsupported("only rank-4 f32 has an NHWC kernel");
  for (ValueId v : node.inputs)
    if (v == kNoValue || graph.value(v).is_constant() || !is_f32_rank4(graph, v))
      return unsupported("only run-time rank-4 f32 inputs have an NHWC kernel");
  Result<int64_t> axis = concat_axis(graph, node);
  if (!axis.is_ok()) return axis.status();
  if (*axis != 1) return unsupported("only Concat along the channels has an NHWC kernel");
  return Status::ok();
}

Result<std::unique_ptr<NhwcNode>> NhwcNode::create(const Graph& graph, const Node& node, pthreadpool_t pool,
                                                   const TensorOf& tensor_of) {
  HS_RETURN_IF_ERROR(nhwc_kernel_supports(graph, node));
  auto n = std::unique_ptr<NhwcNode>(new NhwcNode());
  n->pool_ = pool;
  n->out_ = tensor_of(node.outputs[0]).data<float>();
  const Shape& ys = graph.value(node.outputs[0]).type.shape;
  n->batch_ = ys[0];
  n->out_channels_ = ys[1];
  n->out_h_ = ys[2];
  n->out_w_ = ys[3];
  if (node.op == "Concat") {
    n->concat_ = true;
    n->pixels_ = ys[0] * ys[2] * ys[3];
    for (ValueId v : node.inputs) {
      n->inputs_.push_back(&tensor_of(v));
      n->channels_.push_back(graph.value(v).type.shape[1]);
    }
    return n;
  }
  HS_ASSIGN_OR_RETURN(const ResizeMapping m, read_nearest(graph, node));
  const Shape& xs = graph.value(node.inputs[0]).type.shape;
  n->inputs_.push_back(&tensor_of(node.inputs[0]));
  n->in_h_ = xs[2];
  n->in_w_ = xs[3];
  for (const ResizeTap& t : resize_axis_taps(false, m.transform, m.rounding, m.scale_h, xs[2], ys[2]))
    n->src_row_.push_back(t.lo);
  for (const ResizeTap& t : resize_axis_taps(false, m.transform, m.rounding, m.scale_w, xs[3], ys[3]))
    n->src_col_.push_back(t.lo);
  return n;
}

void NhwcNode::concat_rows(void* context, size_t pixel_block) {
  const NhwcNode& n = *static_cast<const NhwcNode*>(context);
  const int64_t p0 = static_cast<int64_t>(pixel_block) * kPixelBlock;
  const int64_t p1 = std::min(n.pixels_, p0 + kPixelBlock);
  float* out = n.out_;
  int64_t offset = 0;
  for (size_t i = 0; i < n.inputs_.size(); ++i) {
    const int64_t c = n.channels_[i];
    const float* in = n.inputs_[i]->data<float>();
    for (int64_t p = p0; p < p1; ++p)
      std::memcpy(out + p * n.out_channels_ + offset, in + p * c, static_cast<size_t>(c) * sizeof(float));
    offset += c;
  }
}

void NhwcNode::resize_row(void* context, size_t row) {
  const NhwcNode& n = *static_cast<const NhwcNode*>(context);
  const int64_t b = static_cast<int64_t>(row) / n.out_h_;
  const int64_t oh = static_cast<int64_t>(row) % n.out_h_;
  const int64_t c = n.out_channels_;
  const float* in = n.inputs_[0]->data<float>() + (b * n.in_h_ + n.src_row_[oh]) * n.in_w_ * c;
  float* out = n.out_ + (b * n.out_h_ + oh) * n.out_w_ * c;
  for (int64_t ow = 0; ow < n.out_w_; ++ow)
    std::memcpy(out + ow * c, in + n.src_col_[ow] * c, static_cast<size_t>(c) * sizeof(float));
}

Status NhwcNode::run() {
  const size_t tasks = concat_ ? static_cast<size_t>((pixels_ + kPixelBlock - 1) / kPixelBlock)
                               : static_cast<size_t>(batch_ * out_h_);
  auto fn = concat_ ? &NhwcNode::concat_rows : &NhwcNode::resize_row;
  if (pool_) {
    pthreadpool_parallelize_1d(pool_, fn, this, tasks, 0);
  } else {
    for (size_t i = 0; i < tasks; ++i) fn(this, i);
  }
  return Status::ok();
}

}  // namespace hetsched::cpu::xnnpack
