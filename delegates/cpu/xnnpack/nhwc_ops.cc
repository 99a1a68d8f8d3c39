#include "delegates/cpu/xnnpack/nhwc_ops.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "delegates/cpu/xnnpack/op_params.h"
#include "graph/op_schema.h"
#include "graph/passes/fuse_channel_shuffle.h"
#include "graph/resize_taps.h"

namespace hetsched::cpu::xnnpack {

namespace {

constexpr int64_t kPixelBlock = 256;

bool is_f32_rank4(const Graph& graph, ValueId v) {
  const Value& value = graph.value(v);
  return value.type_known && value.type.is_static() && value.type.dtype == DType::kFloat32 && value.type.rank() == 4;
}

// Nearest only: XNNPACK resizes bilinearly (its own operator, in segments).
Result<ResizeMapping> read_nearest(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const ResizeMapping m, read_resize_mapping(graph, node));
  if (m.linear) return unsupported("mode 'linear' has no NHWC kernel (XNNPACK's resize runs it)");
  return m;
}

Result<int64_t> concat_axis(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, node.attrs.require_int("axis"));
  return normalize_axis(attr_axis, 4);
}

// Slice of a channel range [first, first + out C) of a rank-4 value, from
// constant starts/ends/axes (axis 1 only) and steps of 1. The first channel.
Result<int64_t> read_channel_slice(const Graph& graph, const Node& node) {
  if (graph.opset() < 10) return unsupported("Slice before opset 10 has no NHWC kernel");
  const ValueId x = node.inputs[0], y = node.outputs[0];
  if (!is_f32_rank4(graph, x) || !is_f32_rank4(graph, y)) return unsupported("only rank-4 f32 has an NHWC kernel");
  const auto ints = [&](size_t i) -> Result<std::vector<int64_t>> {
    const Tensor* t = constant_input(graph, node, i);
    if (!t) return unsupported("Slice's input " + std::to_string(i) + " is not a constant");
    std::vector<int64_t> v;
    for (int64_t k = 0; k < t->num_elements(); ++k) v.push_back(t->int_at(k));
    return v;
  };
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> starts, ints(1));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> ends, ints(2));
  std::vector<int64_t> axes{0};
  if (node.inputs.size() > 3 && node.inputs[3] != kNoValue) {
    HS_ASSIGN_OR_RETURN(axes, ints(3));
  }
  if (node.inputs.size() > 4 && node.inputs[4] != kNoValue) {
    HS_ASSIGN_OR_RETURN(const std::vector<int64_t> steps, ints(4));
    if (steps != std::vector<int64_t>{1}) return unsupported("only Slice with step 1 has an NHWC kernel");
  }
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1)
    return unsupported("only Slice along one axis has an NHWC kernel");
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(axes[0], 4));
  if (axis != 1) return unsupported("only Slice along the channels has an NHWC kernel");
  const Shape& xs = graph.value(x).type.shape;
  const SliceRange r = slice_range(xs[1], starts[0], ends[0], 1);
  if (r.length != graph.value(y).type.shape[1] || r.length == 0) return unsupported("a Slice whose output does not match");
  return r.start;
}

// The channel shuffle's group; every input a rank-4 f32 run-time value.
Result<int64_t> shuffle_group(const Graph& graph, const Node& node) {
  for (ValueId v : node.inputs)
    if (v == kNoValue || graph.value(v).is_constant() || !is_f32_rank4(graph, v))
      return unsupported("only run-time rank-4 f32 inputs have an NHWC kernel");
  if (!is_f32_rank4(graph, node.outputs[0])) return unsupported("only rank-4 f32 has an NHWC kernel");
  HS_ASSIGN_OR_RETURN(const int64_t g, node.attrs.require_int("group"));
  if (g < 1 || graph.value(node.outputs[0]).type.shape[1] % g != 0)
    return unsupported("a group that does not divide the channels");
  return g;
}

bool has_runtime_input(const Graph& graph, const Node& node) {
  return !node.inputs.empty() && node.inputs[0] != kNoValue && !graph.value(node.inputs[0]).is_constant();
}

// Split along the channels: the outputs' static shapes say how many each
// takes (whichever form gave them: `split` attribute or input, or
// num_outputs), so only that they tile the input's channels is checked.
Status split_supported(const Graph& graph, const Node& node) {
  if (!has_runtime_input(graph, node)) return unsupported("no run-time input");
  const ValueId x = node.inputs[0];
  if (!is_f32_rank4(graph, x)) return unsupported("only rank-4 f32 has an NHWC kernel");
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, node.attrs.get_int("axis", 0));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, 4));
  if (axis != 1) return unsupported("only Split along the channels has an NHWC kernel");
  const Shape& xs = graph.value(x).type.shape;
  int64_t channels = 0;
  for (ValueId y : node.outputs) {
    if (y == kNoValue || !is_f32_rank4(graph, y)) return unsupported("only rank-4 f32 outputs have an NHWC kernel");
    const Shape& ys = graph.value(y).type.shape;
    if (ys[0] != xs[0] || ys[2] != xs[2] || ys[3] != xs[3]) return unsupported("a Split whose outputs do not match");
    channels += ys[1];
  }
  if (channels != xs[1]) return unsupported("a Split whose outputs do not tile the channels");
  return Status::ok();
}

}  // namespace

Status nhwc_kernel_supports(const Graph& graph, const Node& node) {
  if (node.op == "Split") return split_supported(graph, node);
  if (node.outputs.size() != 1) return unsupported("not one output");
  if (node.op == "Resize") {
    if (node.inputs.empty() || node.inputs[0] == kNoValue || graph.value(node.inputs[0]).is_constant())
      return unsupported("no run-time input");
    return read_nearest(graph, node).status();
  }
  if (node.op == "Slice") {
    if (!has_runtime_input(graph, node)) return unsupported("no run-time input");
    return read_channel_slice(graph, node).status();
  }
  if (node.op == kChannelShuffleOp) return shuffle_group(graph, node).status();
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
  if (node.op == "Split") {
    const Shape& xs = graph.value(node.inputs[0]).type.shape;
    n->kind_ = Kind::kSplit;
    n->inputs_.push_back(&tensor_of(node.inputs[0]));
    n->out_channels_ = xs[1];  // the input's, the row each pixel's outputs take from
    n->pixels_ = xs[0] * xs[2] * xs[3];
    for (ValueId y : node.outputs) {
      n->outs_.push_back(tensor_of(y).data<float>());
      n->channels_.push_back(graph.value(y).type.shape[1]);
    }
    return n;
  }
  n->out_ = tensor_of(node.outputs[0]).data<float>();
  const Shape& ys = graph.value(node.outputs[0]).type.shape;
  n->batch_ = ys[0];
  n->out_channels_ = ys[1];
  n->out_h_ = ys[2];
  n->out_w_ = ys[3];
  n->pixels_ = ys[0] * ys[2] * ys[3];
  if (node.op == "Slice") {
    n->kind_ = Kind::kSlice;
    n->inputs_.push_back(&tensor_of(node.inputs[0]));
    n->channels_.push_back(graph.value(node.inputs[0]).type.shape[1]);
    HS_ASSIGN_OR_RETURN(n->first_channel_, read_channel_slice(graph, node));
    return n;
  }
  if (node.op == kChannelShuffleOp) {
    n->kind_ = Kind::kShuffle;
    HS_ASSIGN_OR_RETURN(n->group_, shuffle_group(graph, node));
    for (ValueId v : node.inputs) {
      n->inputs_.push_back(&tensor_of(v));
      n->channels_.push_back(graph.value(v).type.shape[1]);
    }
    // Output channel j*g + i reads channel i*(C/g) + j of the concatenation.
    const int64_t c = n->out_channels_, per_group = c / n->group_;
    std::vector<std::pair<int32_t, int32_t>> concatenated;
    for (size_t i = 0; i < n->channels_.size(); ++i)
      for (int64_t k = 0; k < n->channels_[i]; ++k)
        concatenated.emplace_back(static_cast<int32_t>(i), static_cast<int32_t>(k));
    for (int64_t oc = 0; oc < c; ++oc) n->shuffle_source_.push_back(concatenated[oc % n->group_ * per_group + oc / n->group_]);
    return n;
  }
  if (node.op == "Concat") {
    n->kind_ = Kind::kConcat;
    for (ValueId v : node.inputs) {
      n->inputs_.push_back(&tensor_of(v));
      n->channels_.push_back(graph.value(v).type.shape[1]);
    }
    n->in_place_.assign(node.inputs.size(), false);
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
    if (n.in_place_[i]) {
      offset += c;
      continue;
    }
    for (int64_t p = p0; p < p1; ++p)
      std::memcpy(out + p * n.out_channels_ + offset, in + p * c, static_cast<size_t>(c) * sizeof(float));
    offset += c;
  }
}

void NhwcNode::slice_rows(void* context, size_t pixel_block) {
  const NhwcNode& n = *static_cast<const NhwcNode*>(context);
  const int64_t p0 = static_cast<int64_t>(pixel_block) * kPixelBlock;
  const int64_t p1 = std::min(n.pixels_, p0 + kPixelBlock);
  const int64_t in_c = n.channels_[0], out_c = n.out_channels_;
  const float* in = n.inputs_[0]->data<float>() + n.first_channel_;
  for (int64_t p = p0; p < p1; ++p)
    std::memcpy(n.out_ + p * out_c, in + p * in_c, static_cast<size_t>(out_c) * sizeof(float));
}

void NhwcNode::split_rows(void* context, size_t pixel_block) {
  const NhwcNode& n = *static_cast<const NhwcNode*>(context);
  const int64_t p0 = static_cast<int64_t>(pixel_block) * kPixelBlock;
  const int64_t p1 = std::min(n.pixels_, p0 + kPixelBlock);
  const float* in = n.inputs_[0]->data<float>();
  int64_t offset = 0;
  for (size_t i = 0; i < n.outs_.size(); ++i) {
    const int64_t c = n.channels_[i];
    for (int64_t p = p0; p < p1; ++p)
      std::memcpy(n.outs_[i] + p * c, in + p * n.out_channels_ + offset, static_cast<size_t>(c) * sizeof(float));
    offset += c;
  }
}

// Output channel j*g + i of a pixel reads channel i*(C/g) + j of the
// inputs' concatenation (shuffle_source_).
void NhwcNode::shuffle_rows(void* context, size_t pixel_block) {
  const NhwcNode& n = *static_cast<const NhwcNode*>(context);
  const int64_t p0 = static_cast<int64_t>(pixel_block) * kPixelBlock;
  const int64_t p1 = std::min(n.pixels_, p0 + kPixelBlock);
  const int64_t c = n.out_channels_, per_group = c / n.group_;
  const size_t inputs = n.inputs_.size();
  // ShuffleNet's two forms, interleaves: the two halves of one input, or
  // two inputs of C/2 channels (the block's Concat taken in).
  const bool halves = n.group_ == 2 && inputs == 1;
  const bool pair = n.group_ == 2 && inputs == 2 && n.channels_[0] == per_group;
  for (int64_t p = p0; p < p1; ++p) {
    float* dst = n.out_ + p * c;
    if (halves || pair) {
      const float* lo = n.inputs_[0]->data<float>() + p * n.channels_[0];
      const float* hi = pair ? n.inputs_[1]->data<float>() + p * per_group : lo + per_group;
      for (int64_t j = 0; j < per_group; ++j) {
        dst[2 * j] = lo[j];
        dst[2 * j + 1] = hi[j];
      }
      continue;
    }
    for (int64_t oc = 0; oc < c; ++oc) {
      const auto [i, k] = n.shuffle_source_[static_cast<size_t>(oc)];
      dst[oc] = n.inputs_[static_cast<size_t>(i)]->data<float>()[p * n.channels_[static_cast<size_t>(i)] + k];
    }
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
  const bool per_pixel = kind_ != Kind::kResize;
  const size_t tasks = per_pixel ? static_cast<size_t>((pixels_ + kPixelBlock - 1) / kPixelBlock)
                                 : static_cast<size_t>(batch_ * out_h_);
  auto fn = kind_ == Kind::kConcat  ? &NhwcNode::concat_rows
            : kind_ == Kind::kSlice ? &NhwcNode::slice_rows
            : kind_ == Kind::kSplit ? &NhwcNode::split_rows
            : kind_ == Kind::kShuffle ? &NhwcNode::shuffle_rows
                                      : &NhwcNode::resize_row;
  if (pool_) {
    pthreadpool_parallelize_1d(pool_, fn, this, tasks, 0);
  } else {
    for (size_t i = 0; i < tasks; ++i) fn(this, i);
  }
  return Status::ok();
}

}  // namespace hetsched::cpu::xnnpack
