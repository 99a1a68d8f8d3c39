#include "delegates/vgf/lowering.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "graph/passes/fused_activation.h"
#include "graph/resize_taps.h"
#include "delegates/vgf/shaders/gelu_spv.h"
#include "delegates/vgf/shaders/hardswish_spv.h"
#include "delegates/vgf/shaders/layer_norm_spv.h"
#include "delegates/vgf/shaders/softmax_spv.h"
#include "delegates/vgf/index_runs.h"
#include "delegates/vgf/tosa_ops.h"
#include "graph/op_schema.h"
#include "graph/ops_extra.h"
#include "graph/slice_window.h"

namespace hetsched::vgf {

namespace {

// Logical NCHW dim k sits at NHWC position kNhwcPosition[k]; NHWC position i
// holds logical dim kNchwDim[i].
constexpr int32_t kNhwcPosition[4] = {0, 3, 1, 2};
constexpr int32_t kNchwDim[4] = {0, 2, 3, 1};
// Workgroup size of every VGF shader (local_size_x in shaders/*.comp).
constexpr uint32_t kGroupSize = 64;
constexpr float kInf = std::numeric_limits<float>::infinity();
// Inputs of one concat (its rule in tosa_ops.cc); more are concatenated in chunks.
constexpr size_t kMaxConcatInputs = 64;
// A Gather of constant indices becomes one slice per strided run of its
// indices; past this many runs it is a real gather and stays refused.
constexpr size_t kMaxGatherRuns = 64;

Shape to_nhwc_shape(const Shape& s) { return {s[0], s[2], s[3], s[1]}; }

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// --- what can be lowered ---------------------------------------------------------

const std::set<std::string, std::less<>>& unary_ops() {
  static const std::set<std::string, std::less<>> ops = {"Sin",  "Cos",  "Exp",     "Abs",       "Neg",
                                                          "Reciprocal", "Sigmoid", "Tanh", "Sqrt", "Relu",
                                                          "HardSigmoid", "HardSwish", "Clip", "Log", "Floor", "Ceil",
                                                          "Erf", "Gelu"};
  return ops;
}

const std::set<std::string, std::less<>>& lowerable_ops() {
  static const std::set<std::string, std::less<>> ops = [] {
    std::set<std::string, std::less<>> s(unary_ops().begin(), unary_ops().end());
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Transpose", "Reshape", "Flatten", "Identity", "Squeeze",
                           "Unsqueeze", "Concat", "Slice", "Resize", "Conv", "BatchNormalization", "MatMul", "Gemm",
                           "AveragePool", "MaxPool", "GlobalAveragePool", "Softmax", "ReduceMean", "ReduceSum",
                           "ReduceMax", "Pad", "Dropout", "LayerNormalization", "Where", "Split", "Expand", "Tile",
                           "Gather", "ConvTranspose", "Cast"})
      s.insert(op);
    return s;
  }();
  return ops;
}

// Inputs that carry tensor data (the rest are shape parameters).
std::vector<size_t> data_inputs(const Node& n) {
  if (n.op == "Reshape" || n.op == "Squeeze" || n.op == "Unsqueeze" || n.op == "Slice" || n.op == "ReduceMean" ||
      n.op == "Resize" || n.op == "Clip" || n.op == "Conv" || n.op == "BatchNormalization" || n.op == "Pad" ||
      n.op == "ReduceSum" || n.op == "ReduceMax" || n.op == "Dropout" || n.op == "Split" || n.op == "Expand" ||
      n.op == "Tile" || n.op == "Gather" || n.op == "ConvTranspose")
    return {0};
  // Where's condition is a bool constant, folded to 0/1 (check_node).
  if (n.op == "Where") return {1, 2};
  std::vector<size_t> all;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] != kNoValue) all.push_back(i);
  return all;
}

// Tensors are f32, except either side of a Cast (`cast`): an fp16 model's
// edges and the i32, i64 and bool tensors a model casts to or from, which
// TOSA casts convert.
Status check_tensor(const Graph& g, ValueId v, const std::string& what, bool cast = false) {
  const Value& val = g.value(v);
  if (!val.type_known || !val.type.is_static()) return unsupported(what + " has no static shape");
  const DType d = val.type.dtype;
  const bool cast_dtype = is_half_float(d) || d == DType::kInt32 || d == DType::kInt64 || d == DType::kBool;
  if (d != DType::kFloat32 && !(cast && cast_dtype))
    return unsupported(what + " is " + val.type.to_string() + ": VGF graphs here are f32 only");
  if (val.type.rank() > kMaxRank)
    return unsupported(what + " " + val.type.to_string() + " has rank above " + std::to_string(kMaxRank));
  if (val.type.num_elements() == 0) return unsupported(what + " " + val.type.to_string() + " is empty");
  return Status::ok();
}

bool is_constant(const Graph& g, const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] != kNoValue && g.value(n.inputs[i]).is_constant();
}

// The rules of the ops transformers add (Gelu, LayerNormalization, Where,
// Split, Expand, Tile, Gather of constant indices).
Status check_transformer_node(const Graph& g, const Node& n) {
  if (n.op == "Gelu") {
    HS_ASSIGN_OR_RETURN(const std::string approximate, n.attrs.get_string("approximate", "none"));
    if (approximate != "none" && approximate != "tanh")
      return unsupported("Gelu approximate '" + approximate + "': none and tanh are lowered");
  }
  if (n.op == "LayerNormalization") {
    // Mean and InvStdDev are training outputs; a graph that reads them runs elsewhere.
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] != kNoValue && (!g.consumers(n.outputs[i]).empty() || g.is_output(n.outputs[i])))
        return unsupported("LayerNormalization's Mean and InvStdDev outputs are not lowered (only Y is)");
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] != kNoValue && g.value(n.inputs[i]).type.rank() > g.value(n.inputs[0]).type.rank())
        return unsupported("LayerNormalization scale or bias of higher rank than X");
  }
  if (n.op == "Where") {
    if (!is_constant(g, n, 0))
      return unsupported("Where's condition must be a constant (computed at run time here): a VGF select takes a constant bool condition");
    if (g.value(n.inputs[0]).type.dtype != DType::kBool) return unsupported("Where's condition must be bool");
  }
  if (n.op == "Split") {
    const bool has_split = n.inputs.size() > 1 && n.inputs[1] != kNoValue;
    if (has_split && !is_constant(g, n, 1))
      return unsupported("split sizes must be a constant (computed at run time here): VGF slices take constants");
  }
  if ((n.op == "Expand" || n.op == "Tile") && !is_constant(g, n, 1))
    return unsupported(n.op + "'s " + (n.op == "Expand" ? "shape" : "repeats") + " must be a constant (computed at run time here)");
  if (n.op == "Tile") {
    // The tile's copy walks a (repeat, dim) pair per repeated dim above size 1.
    const std::vector<int64_t> repeats = g.value(n.inputs[1]).constant->to_int64_vector();
    const Shape& x = g.value(n.inputs[0]).type.shape;
    size_t walked = x.size();
    for (size_t d = 0; d < x.size() && d < repeats.size(); ++d) walked += repeats[d] != 1 && x[d] > 1;
    if (walked > kMaxRank)
      return unsupported("Tile of " + g.value(n.inputs[0]).type.to_string() + " repeating dims above size 1: more than " +
                         std::to_string(kMaxRank) + " dims to walk");
  }
  if (n.op == "ConvTranspose") {
    if (g.value(n.inputs[0]).type.rank() != 4)
      return unsupported("only 2-D ConvTranspose (rank-4 input) is lowered to VGF");
    if (!is_constant(g, n, 1) || (n.inputs.size() > 2 && n.inputs[2] != kNoValue && !is_constant(g, n, 2)))
      return unsupported("weights and bias must be a constant (computed at run time here): a VGF transpose_conv2d needs constant weights");
    HS_ASSIGN_OR_RETURN(const int64_t group, n.attrs.get_int("group", 1));
    if (group != 1) return unsupported("grouped ConvTranspose (group " + std::to_string(group) + "): transpose_conv2d has group 1");
    HS_ASSIGN_OR_RETURN(const FusedActivation act, read_fused_activation(n.attrs));
    if (act.kind != FusedActivation::Kind::kNone) return unsupported("ConvTranspose with a fused activation is not lowered");
  }
  if (n.op == "Gather") {
    const Value& idx = g.value(n.inputs[1]);
    HS_ASSIGN_OR_RETURN(int64_t axis, n.attrs.get_int("axis", 0));
    const Shape& data = g.value(n.inputs[0]).type.shape;
    if (axis < 0) axis += static_cast<int64_t>(data.size());
    const int64_t dim = data[static_cast<size_t>(axis)];
    std::vector<int64_t> indices = idx.constant->to_int64_vector();
    for (size_t k = 0; k < indices.size(); ++k) {
      int64_t& i = indices[k];
      if (i < -dim || i >= dim) return unsupported("Gather index " + std::to_string(i) + " out of range: not lowered");
      if (i < 0) i += dim;
      // An in-order selection (as_strided's window, a strided slice) is
      // slices; a reordering or repeating one (index_select) is a gather.
      if (k > 0 && i <= indices[k - 1])
        return unsupported("constant Gather indices that reorder or repeat elements: a gather, not expressible as a "
                           "VGF graph");
    }
    const size_t runs = index_runs(indices).size();
    if (runs > kMaxGatherRuns)
      return unsupported("constant Gather indices form " + std::to_string(runs) + " strided runs: more than " +
                         std::to_string(kMaxGatherRuns) + " slices, not lowered");
  }
  return Status::ok();
}

Status check_node(const Graph& g, const Node& n) {
  // A Gather of constant increasing indices is slices of strided runs
  // (torch's select, unbind, as_strided); run-time indices are a real gather.
  if (n.op == "GatherElements" || (n.op == "Gather" && !is_constant(g, n, 1)))
    return unsupported("data-dependent indexing: not expressible as a VGF graph");
  if (!lowerable_ops().count(n.op)) return unsupported("op " + n.op + " has no TOSA lowering");
  const bool f16_ok = n.op == "Cast";
  for (size_t i : data_inputs(n))
    HS_RETURN_IF_ERROR(check_tensor(g, n.inputs[i], "input " + std::to_string(i), f16_ok));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i] != kNoValue)
      HS_RETURN_IF_ERROR(check_tensor(g, n.outputs[i], "output " + std::to_string(i), f16_ok));
  HS_RETURN_IF_ERROR(check_transformer_node(g, n));
  const size_t rank = g.value(n.inputs[0]).type.rank();
  if (n.op == "Conv") {
    if (rank != 4) return unsupported("only 2-D convolution (rank-4 input) is lowered to VGF");
    if (!is_constant(g, n, 1) || (n.inputs.size() > 2 && n.inputs[2] != kNoValue && !is_constant(g, n, 2)))
      return unsupported("weights and bias must be a constant (computed at run time here): a VGF conv2d needs constant weights");
    HS_ASSIGN_OR_RETURN(const int64_t group, n.attrs.get_int("group", 1));
    // group 1 is conv2d, group = channels depthwise_conv2d, any other group
    // one conv2d per group on a slice of the channels (TOSA legalizations' way).
    const int64_t channels = g.value(n.inputs[0]).type.shape[1];
    const Shape& ws = g.value(n.inputs[1]).type.shape;
    if (group < 1 || ws[1] * group != channels || ws[0] % group != 0)
      return unsupported("convolution with group " + std::to_string(group) + " of " + std::to_string(channels) +
                         " channels and weights " + g.value(n.inputs[1]).type.to_string() + " does not split into groups");
    HS_ASSIGN_OR_RETURN(const FusedActivation act, read_fused_activation(n.attrs));
    if (act.kind == FusedActivation::Kind::kLeakyRelu)
      return unsupported("fused activation LeakyRelu has no TOSA lowering");
  }
  if (n.op == "AveragePool" || n.op == "MaxPool" || n.op == "GlobalAveragePool") {
    if (rank != 4) return unsupported("only 2-D pooling (rank-4 input) is lowered to VGF");
    HS_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations, n.attrs.get_ints("dilations", {1, 1}));
    if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; }))
      return unsupported("dilated pooling " + ints_text(dilations) + ": TOSA pools have no dilation");
  }
  if (n.op == "Resize") HS_RETURN_IF_ERROR(read_resize_mapping(g, n).status());
  if (n.op == "BatchNormalization")
    for (size_t i = 1; i < 5; ++i)
      if (!is_constant(g, n, i)) return unsupported("statistics must be a constant (computed at run time here): VGF folds them into constants");
  if (n.op == "Clip" && g.opset() > 10)
    for (size_t i = 1; i < 3; ++i)
      if (i < n.inputs.size() && n.inputs[i] != kNoValue && !is_constant(g, n, i))
        return unsupported("bounds must be a constant (computed at run time here): a VGF clamp takes constant bounds");
  if (n.op == "Pad") {
    const Tensor* pads = n.inputs.size() > 1 && n.inputs[1] != kNoValue ? g.value(n.inputs[1]).constant.get() : nullptr;
    const Tensor* value = n.inputs.size() > 2 && n.inputs[2] != kNoValue ? g.value(n.inputs[2]).constant.get() : nullptr;
    if (g.opset() > 10 && (!pads || (n.inputs.size() > 2 && n.inputs[2] != kNoValue && !value)))
      return unsupported("pads and fill value must be a constant (computed at run time here): a VGF pad takes constants");
    const Tensor* axes = n.inputs.size() > 3 && n.inputs[3] != kNoValue ? g.value(n.inputs[3]).constant.get() : nullptr;
    if (n.inputs.size() > 3 && n.inputs[3] != kNoValue && !axes)
      return unsupported("pad axes must be a constant (computed at run time here): a VGF pad takes constants");
    HS_ASSIGN_OR_RETURN(const PadParams p,
                        pad_params(n.attrs, g.opset(), g.value(n.inputs[0]).type.shape, pads, value, axes));
    if (p.mode != "constant") return unsupported("pad mode '" + p.mode + "': TOSA pad fills a constant");
    if (std::any_of(p.pads.begin(), p.pads.end(), [](int64_t v) { return v < 0; }))
      return unsupported("negative pads " + ints_text(p.pads) + " crop: not lowered to VGF");
  }
  if (n.op == "ReduceSum" || n.op == "ReduceMax") {
    const bool has_axes = n.inputs.size() > 1 && n.inputs[1] != kNoValue;
    const Tensor* axes = has_axes ? g.value(n.inputs[1]).constant.get() : nullptr;
    if (has_axes && !axes) return unsupported("axes must be a constant (computed at run time here): a VGF reduction takes constant axes");
    Result<ReduceParams> p = reduce_params(n.op, n.attrs, g.opset(), g.value(n.inputs[0]).type.shape, has_axes, axes);
    if (!p.is_ok()) return unsupported(p.status().message());
  }
  if (n.op == "Gemm")
    for (ValueId in : n.inputs)
      if (in != kNoValue && g.value(in).type.rank() > 2) return unsupported("Gemm operands above rank 2");
  return Status::ok();
}

// --- the lowering ------------------------------------------------------------------

// A graph tensor as the lowering holds it: a resource and how it relates to
// the tensor's logical (ONNX) shape.
struct Operand {
  uint32_t id = 0;
  Shape logical;
  bool nhwc = false;  // rank 4 only
};

// Tap tables for Resize, computed exactly as the portable kernel computes
// them (delegates/cpu/kernels/resize.cc), so both engines read the same
// source pixels with the same weights.
using Transform = ResizeTransform;
using Rounding = ResizeRounding;

// Rows of (first index, second index, weight of the second).
std::vector<float> resize_taps(bool linear, Transform t, Rounding r, double scale, int64_t in_len, int64_t out_len) {
  std::vector<float> taps;
  for (const ResizeTap& tap : resize_axis_taps(linear, t, r, scale, in_len, out_len))
    taps.insert(taps.end(), {static_cast<float>(tap.lo), static_cast<float>(tap.hi), tap.w});
  return taps;
}

// Window geometry resolved as the portable kernels resolve it
// (window_geometry in delegates/cpu/kernels/conv.cc): pads from auto_pad.
struct Window2d {
  int64_t kernel[2], stride[2], dilation[2], begin[2], end[2];
};

Result<Window2d> window_2d(const Node& n, const Shape& x, const int64_t kernel[2]) {
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, n.attrs.get_ints("strides", {1, 1}));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations, n.attrs.get_ints("dilations", {1, 1}));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, n.attrs.get_ints("pads", {0, 0, 0, 0}));
  HS_ASSIGN_OR_RETURN(const std::string auto_pad, n.attrs.get_string("auto_pad", "NOTSET"));
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    return invalid_argument("window attributes of node '" + n.name + "' do not have 2-D sizes");
  Window2d w{};
  for (size_t i = 0; i < 2; ++i) {
    w.kernel[i] = kernel[i];
    w.stride[i] = strides[i];
    w.dilation[i] = dilations[i];
    const int64_t in = x[2 + i];
    const int64_t dk = (kernel[i] - 1) * dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (in + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + dk - in);
      w.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.end[i] = total - w.begin[i];
    } else if (auto_pad == "VALID") {
      w.begin[i] = w.end[i] = 0;
    } else {
      w.begin[i] = pads[i];
      w.end[i] = pads[2 + i];
    }
  }
  return w;
}

std::vector<float> floats_of(const Tensor& t) { return t.to_float_vector(); }

// NCHW → NHWC permutation of row-major data of logical shape `s`.
std::vector<float> permute_to_nhwc(const std::vector<float>& data, const Shape& s) {
  std::vector<float> out(data.size());
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw)
          out[((in * h + ih) * w + iw) * c + ic] = data[((in * c + ic) * h + ih) * w + iw];
  return out;
}

class Lowerer {
 public:
  explicit Lowerer(const Island& island) : island_(island), g_(*island.graph) {}

  Result<VgfFile> run() {
    for (ValueId v : island_.inputs) {
      const TensorType& t = g_.value(v).type;
      const bool nhwc = t.rank() == 4;
      const uint32_t id = add_resource(ResourceKind::kInput, nhwc ? to_nhwc_shape(t.shape) : t.shape, nhwc,
                                       g_.value(v).name, t.dtype);
      file_.inputs.push_back(id);
      values_[v] = Operand{id, t.shape, nhwc};
    }
    for (NodeId id : island_.nodes) {
      const Node& n = g_.node(id);
      if (Status s = check_node(g_, n); !s.is_ok())
        return unsupported("failed to lower " + g_.describe_node(id) + " to VGF: " + s.message());
      node_ = &n;
      if (Status s = lower_node(n); !s.is_ok()) return s.with_context("failed to lower " + g_.describe_node(id) + ": ");
    }
    node_ = nullptr;
    for (ValueId v : island_.outputs) HS_RETURN_IF_ERROR(bind_output(v));
    flush_graph_segment();
    return std::move(file_);
  }

 private:
  // --- resources and operators ---------------------------------------------------

  uint32_t add_resource(ResourceKind kind, const Shape& shape, bool nhwc, std::string name = "",
                        DType dtype = DType::kFloat32) {
    Resource r;
    r.kind = kind;
    r.dtype = dtype;
    r.shape = shape;
    r.strides = dense_strides(shape);
    r.layout = nhwc ? TensorLayout::kNhwc : TensorLayout::kNchw;
    r.name = std::move(name);
    file_.resources.push_back(std::move(r));
    return static_cast<uint32_t>(file_.resources.size() - 1);
  }

  Operand temp(const Shape& logical, bool nhwc) {
    return Operand{add_resource(ResourceKind::kIntermediate, nhwc ? to_nhwc_shape(logical) : logical, nhwc), logical,
                   nhwc};
  }

  // `data` is in memory order of the operand (NHWC when nhwc).
  Operand constant(const std::vector<float>& data, const Shape& logical, bool nhwc) {
    const uint32_t id = add_resource(ResourceKind::kConstant, nhwc ? to_nhwc_shape(logical) : logical, nhwc);
    size_t offset = (file_.constants.size() + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
    file_.constants.resize(offset + data.size() * sizeof(float), 0);
    std::memcpy(file_.constants.data() + offset, data.data(), data.size() * sizeof(float));
    file_.resources[id].constant_offset = offset;
    file_.resources[id].constant_size = data.size() * sizeof(float);
    return Operand{id, logical, nhwc};
  }

  // A constant of `rank` dims of size 1.
  Operand scalar(float value, size_t rank) { return constant({value}, Shape(rank, 1), false); }

  void emit(OpCode op, std::vector<uint32_t> inputs, uint32_t output, OpAttr attr = NoAttr{}) {
    Operator o;
    o.op = op;
    o.attr = std::move(attr);
    o.inputs = std::move(inputs);
    o.outputs = {output};
    o.name = node_ ? node_->name : "";
    pending_.push_back(std::move(o));
  }

  Operand unary(OpCode op, const Operand& x, OpAttr attr = NoAttr{}) {
    Operand y = temp(x.logical, x.nhwc);
    emit(op, {x.id}, y.id, std::move(attr));
    return y;
  }

  Operand binary(OpCode op, const Operand& a, const Operand& b, const Shape& logical) {
    Operand y = temp(logical, a.nhwc || b.nhwc);
    emit(op, {a.id, b.id}, y.id);
    return y;
  }

  void flush_graph_segment() {
    if (pending_.empty()) return;
    Module m;
    m.type = ModuleType::kGraph;
    m.name = "graph_" + std::to_string(file_.segments.size());
    Segment s;
    s.type = ModuleType::kGraph;
    s.module = static_cast<uint32_t>(file_.modules.size());
    s.name = "segment_" + std::to_string(file_.segments.size());
    std::set<uint32_t> written;
    for (const Operator& op : pending_) {
      for (uint32_t in : op.inputs)
        if (!written.count(in) && std::find(s.inputs.begin(), s.inputs.end(), in) == s.inputs.end()) s.inputs.push_back(in);
      for (uint32_t out : op.outputs) {
        written.insert(out);
        s.outputs.push_back(out);
      }
    }
    m.ops = std::move(pending_);
    pending_.clear();
    file_.modules.push_back(std::move(m));
    file_.segments.push_back(std::move(s));
  }

  // --- layouts ------------------------------------------------------------------------

  // True when NCHW and NHWC order the elements of `s` alike (C is 1, or H
  // and W are): the conversion is a reshape.
  static bool layout_is_trivial(const Shape& s) { return s[1] == 1 || s[2] * s[3] == 1; }

  // A resource with memory shape `shape` holding the bytes of `src` (same
  // element count): an alias for intermediates, the same constant bytes for
  // constants, a copy otherwise.
  uint32_t reshape_resource(uint32_t src, const Shape& shape, bool nhwc) {
    const Resource source = file_.resources[src];
    if (source.shape == shape) return src;
    if (source.kind == ResourceKind::kConstant) {
      const uint32_t id = add_resource(ResourceKind::kConstant, shape, nhwc);
      file_.resources[id].constant_offset = source.constant_offset;
      file_.resources[id].constant_size = source.constant_size;
      return id;
    }
    const uint32_t id = add_resource(ResourceKind::kIntermediate, shape, nhwc);
    if (source.kind == ResourceKind::kIntermediate) {
      int32_t group = source.alias_group;
      if (group < 0) {
        group = next_alias_group_++;
        file_.resources[src].alias_group = group;
      }
      file_.resources[id].alias_group = group;
    }
    emit(OpCode::kReshape, {src}, id);
    return id;
  }

  Operand to_row_major(const Operand& x) {
    if (!x.nhwc) return x;
    if (layout_is_trivial(x.logical)) return Operand{reshape_resource(x.id, x.logical, false), x.logical, false};
    Operand y = temp(x.logical, false);
    emit(OpCode::kTranspose, {x.id}, y.id, TransposeAttr{{0, 3, 1, 2}});
    return y;
  }

  Operand to_nhwc(const Operand& x) {
    if (x.nhwc || x.logical.size() != 4) return x;
    if (layout_is_trivial(x.logical))
      return Operand{reshape_resource(x.id, to_nhwc_shape(x.logical), true), x.logical, true};
    Operand y = temp(x.logical, true);
    emit(OpCode::kTranspose, {x.id}, y.id, TransposeAttr{{0, 2, 3, 1}});
    return y;
  }

  // `x` as logical shape `shape` (same element count), in the layout that
  // rank calls for. NHWC data whose C or H*W is 1 already has row-major
  // order, so only non-trivial layouts cost a transpose.
  Operand reshape_to(const Operand& x, const Shape& shape) {
    if (shape == x.logical) return x;
    const Operand rm = x.nhwc && !layout_is_trivial(x.logical) ? to_row_major(x) : x;
    const bool nhwc = shape.size() == 4;
    if (nhwc && !layout_is_trivial(shape)) return to_nhwc(Operand{reshape_resource(rm.id, shape, false), shape, false});
    return Operand{reshape_resource(rm.id, nhwc ? to_nhwc_shape(shape) : shape, nhwc), shape, nhwc};
  }

  // --- graph values --------------------------------------------------------------------

  // The operand of graph value `v` padded with leading 1s to `rank`, in the
  // canonical layout of that rank (NHWC for 4).
  Result<Operand> operand(ValueId v, size_t rank) {
    const Value& val = g_.value(v);
    Shape padded = val.type.shape;
    padded.insert(padded.begin(), rank - padded.size(), 1);
    if (val.is_constant()) {
      const auto key = std::make_pair(v, rank);
      if (auto it = constants_.find(key); it != constants_.end()) return it->second;
      std::vector<float> data = floats_of(*val.constant);
      const bool nhwc = rank == 4;
      if (nhwc) data = permute_to_nhwc(data, padded);
      return constants_[key] = constant(data, padded, nhwc);
    }
    auto it = values_.find(v);
    if (it == values_.end()) return internal_error("value '" + val.name + "' is used before it is lowered");
    if (val.type.rank() == rank) return it->second;
    return reshape_to(it->second, padded);
  }

  Result<Operand> operand(ValueId v) { return operand(v, g_.value(v).type.rank()); }

  const Shape& out_shape(size_t i = 0) const { return g_.value(node_->outputs[i]).type.shape; }

  void bind(Operand x) { values_[node_->outputs[0]] = to_nhwc(x); }

  // The island's output `v` becomes an output resource: the intermediate
  // that holds it is promoted (the operator that computes it writes the
  // output directly), else a copy is made.
  Status bind_output(ValueId v) {
    auto it = values_.find(v);
    if (it == values_.end()) return internal_error("island output '" + g_.value(v).name + "' is not produced by the island");
    const Operand& x = it->second;
    Resource& r = file_.resources[x.id];
    // A pair of aliases splits into two resources, the reshape between them
    // becoming the copy that fills the output; larger groups keep theirs.
    const auto group_size = std::count_if(file_.resources.begin(), file_.resources.end(), [&](const Resource& other) {
      return r.alias_group >= 0 && other.alias_group == r.alias_group;
    });
    if (r.kind == ResourceKind::kIntermediate && (r.alias_group < 0 || group_size <= 2)) {
      r.kind = ResourceKind::kOutput;
      r.alias_group = -1;
    } else {
      const uint32_t id = add_resource(ResourceKind::kOutput, r.shape, x.nhwc);
      emit(OpCode::kReshape, {x.id}, id);
      values_[v].id = id;
    }
    Resource& out = file_.resources[values_[v].id];
    out.name = g_.value(v).name;
    out.layout = x.nhwc ? TensorLayout::kNhwc : TensorLayout::kNchw;
    file_.outputs.push_back(values_[v].id);
    return Status::ok();
  }

  // Logical axis → memory axis of an operand.
  static int32_t memory_axis(const Operand& x, int64_t axis) {
    return x.nhwc ? kNhwcPosition[axis] : static_cast<int32_t>(axis);
  }

  // --- per op --------------------------------------------------------------------------------

  Status lower_node(const Node& n) {
    const std::string& op = n.op;
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Pow" || op == "Div") return lower_binary(n);
    if (unary_ops().count(op)) return lower_unary(n);
    if (op == "Transpose") return lower_transpose(n);
    if (op == "Reshape" || op == "Flatten" || op == "Identity" || op == "Squeeze" || op == "Unsqueeze") {
      HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
      bind(reshape_to(x, out_shape()));
      return Status::ok();
    }
    if (op == "Concat") return lower_concat(n);
    if (op == "Slice") return lower_slice(n);
    if (op == "Resize") return lower_resize(n);
    if (op == "Conv") return lower_conv(n);
    if (op == "ConvTranspose") return lower_conv_transpose(n);
    if (op == "BatchNormalization") return lower_batch_norm(n);
    if (op == "MatMul") return lower_matmul(n);
    if (op == "Gemm") return lower_gemm(n);
    if (op == "AveragePool" || op == "MaxPool" || op == "GlobalAveragePool") return lower_pool(n);
    if (op == "Softmax") return lower_softmax(n);
    if (op == "ReduceMean") return lower_reduce_mean(n);
    if (op == "ReduceSum" || op == "ReduceMax") return lower_reduce_sum_max(n);
    if (op == "Pad") return lower_pad(n);
    if (op == "LayerNormalization") return lower_layer_norm(n);
    if (op == "Where") return lower_where(n);
    if (op == "Split") return lower_split(n);
    if (op == "Gather") return lower_gather(n);
    if (op == "Expand" || op == "Tile") return lower_tile(n);
    if (op == "Cast") {
      // A TOSA cast, elementwise, so in the operand's layout; f16 or bf16
      // <-> anything but f32 is two (through f32, as the CPU kernel); f32 ->
      // f32 (the fp16 pass's rewrite of a model's casts) is nothing.
      HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
      const DType from = file_.resources[x.id].dtype;
      const DType to = g_.value(n.outputs[0]).type.dtype;
      if (from == to) {
        bind(x);
        return Status::ok();
      }
      auto cast = [&](const Operand& in, DType dtype) {
        Operand out{add_resource(ResourceKind::kIntermediate, file_.resources[in.id].shape, in.nhwc, "", dtype),
                    in.logical, in.nhwc};
        emit(OpCode::kCast, {in.id}, out.id);
        return out;
      };
      const bool half = is_half_float(from) || is_half_float(to);
      if (half && from != DType::kFloat32 && to != DType::kFloat32) x = cast(x, DType::kFloat32);
      bind(cast(x, to));
      return Status::ok();
    }
    if (op == "Dropout") {
      // Inference: the identity.
      HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
      bind(x);
      return Status::ok();
    }
    return unsupported("op " + op + " has no TOSA lowering");
  }

  Status lower_binary(const Node& n) {
    const size_t rank = out_shape().size();
    HS_ASSIGN_OR_RETURN(Operand a, operand(n.inputs[0], rank));
    HS_ASSIGN_OR_RETURN(Operand b, operand(n.inputs[1], rank));
    if (n.op == "Div") {
      // TOSA has no float division: a * (1 / b).
      bind(binary(OpCode::kMul, a, unary(OpCode::kReciprocal, b), out_shape()));
      return Status::ok();
    }
    const OpCode code = n.op == "Add" ? OpCode::kAdd : n.op == "Sub" ? OpCode::kSub : n.op == "Mul" ? OpCode::kMul : OpCode::kPow;
    bind(binary(code, a, b, out_shape()));
    return Status::ok();
  }

  Result<float> clip_bound(const Node& n, size_t i, const char* attr, float fallback) {
    if (g_.opset() <= 10) return n.attrs.get_float(attr, fallback);
    if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return fallback;
    return g_.value(n.inputs[i]).constant->to_float_vector().at(0);
  }

  Status lower_unary(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const std::string& op = n.op;
    static const std::map<std::string, OpCode, std::less<>> kDirect = {
        {"Sin", OpCode::kSin}, {"Cos", OpCode::kCos},         {"Exp", OpCode::kExp},         {"Abs", OpCode::kAbs},
        {"Neg", OpCode::kNeg}, {"Reciprocal", OpCode::kReciprocal}, {"Sigmoid", OpCode::kSigmoid}, {"Tanh", OpCode::kTanh},
        {"Log", OpCode::kLog}, {"Floor", OpCode::kFloor},   {"Ceil", OpCode::kCeil}, {"Erf", OpCode::kErf}};
    if (auto it = kDirect.find(op); it != kDirect.end()) {
      bind(unary(it->second, x));
    } else if (op == "Sqrt") {
      bind(unary(OpCode::kReciprocal, unary(OpCode::kRsqrt, x)));
    } else if (op == "Relu") {
      bind(unary(OpCode::kClamp, x, ClampAttr{0.f, kInf}));
    } else if (op == "Clip") {
      HS_ASSIGN_OR_RETURN(const float lo, clip_bound(n, 1, "min", -kInf));
      HS_ASSIGN_OR_RETURN(const float hi, clip_bound(n, 2, "max", kInf));
      bind(unary(OpCode::kClamp, x, ClampAttr{lo, hi}));
    } else if (op == "HardSigmoid") {
      HS_ASSIGN_OR_RETURN(const float alpha, n.attrs.get_float("alpha", 0.2f));
      HS_ASSIGN_OR_RETURN(const float beta, n.attrs.get_float("beta", 0.5f));
      const size_t rank = x.logical.size();
      Operand scaled = binary(OpCode::kMul, x, scalar(alpha, rank), x.logical);
      Operand shifted = binary(OpCode::kAdd, scaled, scalar(beta, rank), x.logical);
      bind(unary(OpCode::kClamp, shifted, ClampAttr{0.f, 1.f}));
    } else if (op == "HardSwish") {
      bind(custom_shader("hardswish", kHardswishSpv, x));
    } else if (op == "Gelu") {
      HS_ASSIGN_OR_RETURN(const std::string approximate, n.attrs.get_string("approximate", "none"));
      bind(custom_shader("gelu", kGeluSpv, x, {approximate == "tanh" ? 1u : 0u}));
    } else {
      return unsupported("op " + op + " has no TOSA lowering");
    }
    return Status::ok();
  }

  // A compute segment running an embedded shader with bindings (x, y) and
  // push constants: the element count, then `extra`.
  Operand custom_shader(const std::string& name, std::span<const uint32_t> spirv, const Operand& x,
                        const std::vector<uint32_t>& extra = {}) {
    return custom_shader(name, spirv, {x.id}, x, extra);
  }

  // A compute segment of `spirv` reading `inputs`, writing one tensor shaped
  // like `x`; one invocation per output element unless `dispatch` says
  // otherwise.
  Operand custom_shader(const std::string& name, std::span<const uint32_t> spirv, const std::vector<uint32_t>& inputs,
                        const Operand& x, const std::vector<uint32_t>& extra,
                        std::optional<std::array<uint32_t, 3>> dispatch = std::nullopt) {
    flush_graph_segment();
    auto [it, inserted] = compute_modules_.try_emplace(name, static_cast<uint32_t>(file_.modules.size()));
    if (inserted) {
      Module m;
      m.type = ModuleType::kCompute;
      m.name = name;
      m.entry_point = "main";
      m.spirv.assign(spirv.begin(), spirv.end());
      file_.modules.push_back(std::move(m));
    }
    Operand y = temp(x.logical, x.nhwc);
    const uint64_t count = static_cast<uint64_t>(file_.resources[y.id].elements());
    const uint64_t groups = (count + kGroupSize - 1) / kGroupSize;
    const uint64_t gx = std::min<uint64_t>(groups, 65535);
    Segment s;
    s.type = ModuleType::kCompute;
    s.module = it->second;
    // Named after its graph node, as operators are, so per-dispatch timings
    // name the node.
    s.name = node_ && !node_->name.empty() ? node_->name : "segment_" + std::to_string(file_.segments.size()) + "_" + name;
    s.inputs = inputs;
    s.outputs = {y.id};
    s.dispatch = {static_cast<uint32_t>(gx), static_cast<uint32_t>((groups + gx - 1) / gx), 1};
    if (dispatch) s.dispatch = {(*dispatch)[0], (*dispatch)[1], (*dispatch)[2]};
    s.push_constants = {static_cast<uint32_t>(count)};
    s.push_constants.insert(s.push_constants.end(), extra.begin(), extra.end());
    file_.segments.push_back(std::move(s));
    return y;
  }

  Status lower_transpose(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const size_t rank = x.logical.size();
    std::vector<int64_t> reversed(rank);
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    HS_ASSIGN_OR_RETURN(const std::vector<int64_t> perm, n.attrs.get_ints("perm", reversed));
    std::vector<int32_t> perms(rank);
    for (size_t i = 0; i < rank; ++i)
      perms[i] = x.nhwc ? kNhwcPosition[perm[kNchwDim[i]]] : static_cast<int32_t>(perm[i]);
    const Shape& in_memory = file_.resources[x.id].shape;
    std::vector<int32_t> moved;  // the input dims above size 1, in output order
    for (int32_t p : perms)
      if (in_memory[p] > 1) moved.push_back(p);
    if (std::is_sorted(moved.begin(), moved.end())) {
      // Only size-1 dims move: the bytes stay in place.
      const Shape& out = out_shape();
      bind(Operand{reshape_resource(x.id, x.nhwc ? to_nhwc_shape(out) : out, x.nhwc), out, x.nhwc});
      return Status::ok();
    }
    Operand y = temp(out_shape(), rank == 4);
    emit(OpCode::kTranspose, {x.id}, y.id, TransposeAttr{perms});
    bind(y);
    return Status::ok();
  }

  Status lower_concat(const Node& n) {
    const size_t rank = out_shape().size();
    HS_ASSIGN_OR_RETURN(int64_t axis, n.attrs.require_int("axis"));
    if (axis < 0) axis += static_cast<int64_t>(rank);
    std::vector<uint32_t> ids;
    for (ValueId in : n.inputs) {
      HS_ASSIGN_OR_RETURN(Operand x, operand(in, rank));
      ids.push_back(x.id);
    }
    Operand y = temp(out_shape(), rank == 4);
    emit(OpCode::kConcat, std::move(ids), y.id, AxisAttr{memory_axis(y, axis)});
    bind(y);
    return Status::ok();
  }

  Status lower_slice(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const size_t rank = x.logical.size();
    // Logical start and step per dim; untouched dims read everything.
    HS_ASSIGN_OR_RETURN(const SliceWindow w, read_slice(g_, n));
    const std::vector<int64_t>& first = w.start;
    const std::vector<int64_t>& step = w.step;
    Operand y = temp(out_shape(), rank == 4);
    SliceAttr attr;
    for (size_t i = 0; i < rank; ++i) {
      const size_t d = x.nhwc ? static_cast<size_t>(kNchwDim[i]) : i;
      attr.start.push_back(first[d]);
      attr.stride.push_back(step[d]);
      attr.size.push_back(out_shape()[d]);
    }
    emit(OpCode::kSlice, {x.id}, y.id, std::move(attr));
    bind(y);
    return Status::ok();
  }

  Status lower_resize(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    // The mapping every engine reads (check_node refused the other forms).
    HS_ASSIGN_OR_RETURN(const ResizeMapping m, read_resize_mapping(g_, n));
    const bool linear = m.linear;
    const Transform transform = m.transform;
    const Rounding rounding = m.rounding;
    const double scale_h = m.scale_h, scale_w = m.scale_w;
    const Shape& in = x.logical;
    const Shape& out = out_shape();
    Operand taps_y = constant(resize_taps(linear, transform, rounding, scale_h, in[2], out[2]), {out[2], 3}, false);
    Operand taps_x = constant(resize_taps(linear, transform, rounding, scale_w, in[3], out[3]), {out[3], 3}, false);
    Operand y = temp(out, true);
    emit(OpCode::kResize, {x.id, taps_y.id, taps_x.id}, y.id,
         ResizeAttr{linear ? ResizeMode::kBilinear : ResizeMode::kNearest});
    bind(y);
    return Status::ok();
  }

  // Conv: conv2d (group 1), depthwise_conv2d (group = channels, one input
  // channel per group), else per group a slice of the input channels, a
  // conv2d with that group's weights and bias (sliced here, as constants),
  // and one concat of the groups on the channel axis. The fused activation
  // follows the whole convolution.
  Status lower_conv(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const Tensor& w = *g_.value(n.inputs[1]).constant;
    const Shape& ws = w.shape();
    const int64_t oc = ws[0], icg = ws[1], kh = ws[2], kw = ws[3];
    HS_ASSIGN_OR_RETURN(const int64_t group, n.attrs.get_int("group", 1));
    const int64_t kernel[2] = {kh, kw};
    HS_ASSIGN_OR_RETURN(const Window2d win, window_2d(n, x.logical, kernel));
    std::vector<float> bias(static_cast<size_t>(oc), 0.f);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) bias = floats_of(*g_.value(n.inputs[2]).constant);
    const float* pw = w.data<float>();
    const ConvAttr attr{{win.begin[0], win.end[0], win.begin[1], win.end[1]},
                        {win.stride[0], win.stride[1]},
                        {win.dilation[0], win.dilation[1]}};
    Operand y;
    if (group > 1 && icg == 1 && group == x.logical[1]) {
      // [C*M, 1, KH, KW] → [KH, KW, C, M]: output channel c*M + m reads input channel c.
      const int64_t c = group, m = oc / group;
      std::vector<float> weights(static_cast<size_t>(w.num_elements()));
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t mi = 0; mi < m; ++mi)
          for (int64_t r = 0; r < kh; ++r)
            for (int64_t z = 0; z < kw; ++z)
              weights[((r * kw + z) * c + ci) * m + mi] = pw[((ci * m + mi) * kh + r) * kw + z];
      y = temp(out_shape(), true);
      emit(OpCode::kDepthwiseConv2d, {x.id, constant(weights, {kh, kw, c, m}, false).id, constant(bias, {oc}, false).id},
           y.id, attr);
    } else {
      const int64_t ocg = oc / group;
      std::vector<Operand> parts;
      for (int64_t gi = 0; gi < group; ++gi) {
        // OIHW rows [gi*ocg, (gi+1)*ocg) → OHWI.
        std::vector<float> weights(static_cast<size_t>(ocg * kh * kw * icg));
        for (int64_t o = 0; o < ocg; ++o)
          for (int64_t i = 0; i < icg; ++i)
            for (int64_t r = 0; r < kh; ++r)
              for (int64_t z = 0; z < kw; ++z)
                weights[((o * kh + r) * kw + z) * icg + i] = pw[(((gi * ocg + o) * icg + i) * kh + r) * kw + z];
        const std::vector<float> group_bias(bias.begin() + gi * ocg, bias.begin() + (gi + 1) * ocg);
        const Operand xs = group == 1 ? x : slice_along(x, 1, gi * icg, icg);
        Shape part_shape = out_shape();
        part_shape[1] = ocg;
        Operand part = temp(part_shape, true);
        emit(OpCode::kConv2d,
             {xs.id, constant(weights, {ocg, kh, kw, icg}, false).id, constant(group_bias, {ocg}, false).id}, part.id,
             attr);
        parts.push_back(part);
      }
      y = concat_along(std::move(parts), 1);
    }
    HS_ASSIGN_OR_RETURN(const FusedActivation act, read_fused_activation(n.attrs));
    HS_ASSIGN_OR_RETURN(y, apply_activation(act, y));
    bind(y);
    return Status::ok();
  }

  // `parts` (equal but for logical dim `axis`, one layout) concatenated
  // along `axis`: one concat, or a concat of chunks past kMaxConcatInputs.
  Operand concat_along(std::vector<Operand> parts, int64_t axis) {
    while (parts.size() > 1) {
      std::vector<Operand> merged;
      for (size_t at = 0; at < parts.size(); at += kMaxConcatInputs) {
        const size_t end = std::min(parts.size(), at + kMaxConcatInputs);
        if (end - at == 1) {
          merged.push_back(parts[at]);
          continue;
        }
        Shape logical = parts[at].logical;
        logical[static_cast<size_t>(axis)] = 0;
        std::vector<uint32_t> ids;
        for (size_t k = at; k < end; ++k) {
          logical[static_cast<size_t>(axis)] += parts[k].logical[static_cast<size_t>(axis)];
          ids.push_back(parts[k].id);
        }
        Operand y = temp(logical, parts[at].nhwc);
        emit(OpCode::kConcat, std::move(ids), y.id, AxisAttr{memory_axis(y, axis)});
        merged.push_back(y);
      }
      parts = std::move(merged);
    }
    return parts.front();
  }

  // ConvTranspose (group 1) → transpose_conv2d: weights [IC, OC, KH, KW]
  // folded to OHWI, pads the geometry's begin and end, output_padding
  // taken off the end pad (it extends the output past the crop).
  Status lower_conv_transpose(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const Tensor& w = *g_.value(n.inputs[1]).constant;
    HS_ASSIGN_OR_RETURN(const ConvTransposeGeometry geo, conv_transpose_geometry(n.attrs, x.logical, w.shape()));
    const Shape& ws = w.shape();
    const int64_t ic = ws[0], oc = ws[1], kh = ws[2], kw = ws[3];
    const float* pw = w.data<float>();
    std::vector<float> weights(static_cast<size_t>(w.num_elements()));
    for (int64_t i = 0; i < ic; ++i)
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t z = 0; z < kw; ++z) weights[((o * kh + y) * kw + z) * ic + i] = pw[((i * oc + o) * kh + y) * kw + z];
    std::vector<float> bias(static_cast<size_t>(oc), 0.f);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) bias = floats_of(*g_.value(n.inputs[2]).constant);
    Operand wc = constant(weights, {oc, kh, kw, ic}, false);
    Operand bc = constant(bias, {oc}, false);
    Operand y = temp(out_shape(), true);
    emit(OpCode::kTransposeConv2d, {x.id, wc.id, bc.id}, y.id,
         ConvAttr{{geo.pad_begin[0], geo.pad_end[0] - geo.output_padding[0], geo.pad_begin[1],
                   geo.pad_end[1] - geo.output_padding[1]},
                  {geo.strides[0], geo.strides[1]},
                  {geo.dilations[0], geo.dilations[1]}});
    bind(y);
    return Status::ok();
  }

  // A Conv's fused activation (graph/passes/fused_activation.h) as the TOSA
  // ops its standalone node would lower to. check_node refuses the kinds
  // that have none.
  Result<Operand> apply_activation(const FusedActivation& act, const Operand& x) {
    const size_t rank = x.logical.size();
    switch (act.kind) {
      case FusedActivation::Kind::kNone: return x;
      case FusedActivation::Kind::kRelu: return unary(OpCode::kClamp, x, ClampAttr{0.f, kInf});
      case FusedActivation::Kind::kClip: return unary(OpCode::kClamp, x, ClampAttr{act.min, act.max});
      case FusedActivation::Kind::kSigmoid: return unary(OpCode::kSigmoid, x);
      case FusedActivation::Kind::kHardSigmoid: {
        Operand scaled = binary(OpCode::kMul, x, scalar(act.alpha, rank), x.logical);
        Operand shifted = binary(OpCode::kAdd, scaled, scalar(act.beta, rank), x.logical);
        return unary(OpCode::kClamp, shifted, ClampAttr{0.f, 1.f});
      }
      case FusedActivation::Kind::kHardSwish: return custom_shader("hardswish", kHardswishSpv, x);
      case FusedActivation::Kind::kLeakyRelu: break;
    }
    return unsupported("fused activation LeakyRelu has no TOSA lowering");
  }

  Status lower_batch_norm(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    HS_ASSIGN_OR_RETURN(const float epsilon, n.attrs.get_float("epsilon", 1e-5f));
    const std::vector<float> scale = floats_of(*g_.value(n.inputs[1]).constant);
    const std::vector<float> shift = floats_of(*g_.value(n.inputs[2]).constant);
    const std::vector<float> mean = floats_of(*g_.value(n.inputs[3]).constant);
    const std::vector<float> var = floats_of(*g_.value(n.inputs[4]).constant);
    const size_t channels = scale.size();
    std::vector<float> mul(channels), add(channels);
    // The same float folding as the portable kernel's.
    for (size_t c = 0; c < channels; ++c) {
      mul[c] = scale[c] / std::sqrt(var[c] + epsilon);
      add[c] = shift[c] - mean[c] * mul[c];
    }
    Shape per_channel(x.logical.size(), 1);
    per_channel[1] = static_cast<int64_t>(channels);
    // [1, C, 1, 1] in NHWC is [1, 1, 1, C]: the same bytes.
    const bool nhwc = x.nhwc;
    Operand m = constant(mul, per_channel, nhwc);
    Operand a = constant(add, per_channel, nhwc);
    bind(binary(OpCode::kAdd, binary(OpCode::kMul, x, m, x.logical), a, x.logical));
    return Status::ok();
  }

  // numpy matmul of row-major operands already padded to one rank.
  Operand matmul(const Operand& a, const Operand& b) {
    const size_t r = a.logical.size();
    Shape out(r);
    for (size_t d = 0; d + 2 < r; ++d) out[d] = std::max(a.logical[d], b.logical[d]);
    out[r - 2] = a.logical[r - 2];
    out[r - 1] = b.logical[r - 1];
    Operand y = temp(out, false);
    emit(OpCode::kMatmul, {a.id, b.id}, y.id);
    return y;
  }

  // Graph value `v` as a row-major operand of logical shape `shape` (same
  // element count).
  Result<Operand> row_major(ValueId v, const Shape& shape) {
    const Value& val = g_.value(v);
    if (val.is_constant()) return constant(floats_of(*val.constant), shape, false);
    HS_ASSIGN_OR_RETURN(Operand x, operand(v));
    Operand rm = to_row_major(x);
    return Operand{reshape_resource(rm.id, shape, false), shape, false};
  }

  Status lower_matmul(const Node& n) {
    Shape a = g_.value(n.inputs[0]).type.shape;
    Shape b = g_.value(n.inputs[1]).type.shape;
    if (a.size() == 1) a.insert(a.begin(), 1);
    if (b.size() == 1) b.push_back(1);
    const size_t r = std::max(a.size(), b.size());
    a.insert(a.begin(), r - a.size(), 1);
    b.insert(b.begin(), r - b.size(), 1);
    HS_ASSIGN_OR_RETURN(Operand ao, row_major(n.inputs[0], a));
    HS_ASSIGN_OR_RETURN(Operand bo, row_major(n.inputs[1], b));
    bind(reshape_to(matmul(ao, bo), out_shape()));
    return Status::ok();
  }

  Result<Operand> gemm_operand(ValueId v, bool transposed) {
    const Value& val = g_.value(v);
    const Shape& s = val.type.shape;
    if (!transposed) return row_major(v, s);
    const Shape t{s[1], s[0]};
    if (val.is_constant()) {
      const std::vector<float> data = floats_of(*val.constant);
      std::vector<float> out(data.size());
      for (int64_t i = 0; i < s[0]; ++i)
        for (int64_t j = 0; j < s[1]; ++j) out[j * s[0] + i] = data[i * s[1] + j];
      return constant(out, t, false);
    }
    HS_ASSIGN_OR_RETURN(Operand x, row_major(v, s));
    Operand y = temp(t, false);
    emit(OpCode::kTranspose, {x.id}, y.id, TransposeAttr{{1, 0}});
    return y;
  }

  Status lower_gemm(const Node& n) {
    HS_ASSIGN_OR_RETURN(const int64_t trans_a, n.attrs.get_int("transA", 0));
    HS_ASSIGN_OR_RETURN(const int64_t trans_b, n.attrs.get_int("transB", 0));
    HS_ASSIGN_OR_RETURN(const float alpha, n.attrs.get_float("alpha", 1.f));
    HS_ASSIGN_OR_RETURN(const float beta, n.attrs.get_float("beta", 1.f));
    HS_ASSIGN_OR_RETURN(Operand a, gemm_operand(n.inputs[0], trans_a != 0));
    HS_ASSIGN_OR_RETURN(Operand b, gemm_operand(n.inputs[1], trans_b != 0));
    Operand y = matmul(a, b);
    if (alpha != 1.f) y = binary(OpCode::kMul, y, scalar(alpha, 2), y.logical);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      const Value& c = g_.value(n.inputs[2]);
      Shape padded = c.type.shape;
      padded.insert(padded.begin(), 2 - padded.size(), 1);
      Operand co;
      if (c.is_constant()) {
        std::vector<float> data = floats_of(*c.constant);
        for (float& v : data) v *= beta;
        co = constant(data, padded, false);
      } else {
        HS_ASSIGN_OR_RETURN(co, operand(n.inputs[2], 2));
        if (beta != 1.f) co = binary(OpCode::kMul, co, scalar(beta, 2), co.logical);
      }
      y = binary(OpCode::kAdd, y, co, y.logical);
    }
    bind(y);
    return Status::ok();
  }

  Status lower_pool(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const Shape& in = x.logical;
    const Shape& out = out_shape();
    const bool is_max = n.op == "MaxPool";
    int64_t kernel[2] = {in[2], in[3]};
    Window2d win{};
    bool include_pad = false;
    if (n.op == "GlobalAveragePool") {
      win = Window2d{{in[2], in[3]}, {1, 1}, {1, 1}, {0, 0}, {0, 0}};
    } else {
      HS_ASSIGN_OR_RETURN(const std::vector<int64_t> k, n.attrs.require_ints("kernel_shape"));
      kernel[0] = k[0];
      kernel[1] = k[1];
      HS_ASSIGN_OR_RETURN(win, window_2d(n, in, kernel));
      if (!is_max) {
        HS_ASSIGN_OR_RETURN(const int64_t cip, n.attrs.get_int("count_include_pad", 0));
        include_pad = cip != 0 && (win.begin[0] | win.end[0] | win.begin[1] | win.end[1]) != 0;
      }
    }
    Operand src = x;
    int64_t in_h = in[2], in_w = in[3];
    int64_t begin[2] = {win.begin[0], win.begin[1]}, end[2] = {win.end[0], win.end[1]};
    if (include_pad) {
      // Explicit pads count towards the average: make them real zeros. The
      // overhang ceil_mode adds past the end pad stays uncounted padding.
      Shape padded_logical{in[0], in[1], in[2] + begin[0] + end[0], in[3] + begin[1] + end[1]};
      src = temp(padded_logical, true);
      emit(OpCode::kPad, {x.id}, src.id, PadAttr{{0, 0, begin[0], end[0], begin[1], end[1], 0, 0}, 0.f});
      in_h = padded_logical[2];
      in_w = padded_logical[3];
      begin[0] = begin[1] = end[0] = end[1] = 0;
    }
    // The end pad the output size needs (ceil_mode may need more than given).
    const int64_t in_len[2] = {in_h, in_w};
    for (size_t i = 0; i < 2; ++i) {
      const int64_t needed = (out[2 + i] - 1) * win.stride[i] + kernel[i] - in_len[i] - begin[i];
      end[i] = std::max(end[i], needed);
      if (window_output_size(in_len[i], begin[i], end[i], kernel[i], win.stride[i], 1) != out[2 + i])
        return internal_error("pool window does not give the inferred output " + ints_text(out));
    }
    Operand y = temp(out, true);
    emit(is_max ? OpCode::kMaxPool2d : OpCode::kAvgPool2d, {src.id}, y.id,
         PoolAttr{{kernel[0], kernel[1]}, {win.stride[0], win.stride[1]}, {begin[0], end[0], begin[1], end[1]}});
    bind(y);
    return Status::ok();
  }

  // Softmax of a canonical operand along its logical `axis`.
  Operand softmax(const Operand& x, int64_t axis) {
    const int32_t a = memory_axis(x, axis);
    // Along the last axis in memory the rows are contiguous: one compute
    // segment, a workgroup per row (softmax.comp).
    const int64_t cols = x.logical[static_cast<size_t>(axis)];
    const int64_t rows = shape_elements(x.logical) / std::max<int64_t>(cols, 1);
    if (a == static_cast<int32_t>(x.logical.size()) - 1 && cols > 0 && rows <= int64_t{65535} * 65535) {
      const uint64_t gx = std::min<uint64_t>(static_cast<uint64_t>(rows), 65535);
      const std::array<uint32_t, 3> groups = {static_cast<uint32_t>(gx),
                                              static_cast<uint32_t>((static_cast<uint64_t>(rows) + gx - 1) / gx), 1};
      return custom_shader("softmax", kSoftmaxSpv, {x.id}, x, {static_cast<uint32_t>(cols)}, groups);
    }
    Shape reduced = x.logical;
    reduced[axis] = 1;
    Operand m = temp(reduced, x.nhwc);
    emit(OpCode::kReduceMax, {x.id}, m.id, AxisAttr{a});
    Operand e = unary(OpCode::kExp, binary(OpCode::kSub, x, m, x.logical));
    Operand s = temp(reduced, x.nhwc);
    emit(OpCode::kReduceSum, {e.id}, s.id, AxisAttr{a});
    return binary(OpCode::kMul, e, unary(OpCode::kReciprocal, s), x.logical);
  }

  Status lower_softmax(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const int64_t rank = static_cast<int64_t>(x.logical.size());
    const bool per_axis = g_.opset() >= 13;
    HS_ASSIGN_OR_RETURN(int64_t axis, n.attrs.get_int("axis", per_axis ? -1 : 1));
    if (axis < 0) axis += rank;
    if (per_axis || axis == rank - 1) {
      bind(softmax(x, axis));
      return Status::ok();
    }
    // Before opset 13 the input is flattened to 2-D at `axis` and normalised per row.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= x.logical[d];
    Operand flat = reshape_to(x, {outer, inner});
    bind(reshape_to(softmax(flat, 1), out_shape()));
    return Status::ok();
  }

  // Reduces `x` along every logical dim marked in `reduced` (one TOSA
  // reduction per dim), then takes the mean when asked, then drops the
  // reduced dims unless `keepdims`.
  Operand reduce(Operand x, const std::vector<bool>& reduced, OpCode op, bool mean) {
    const size_t rank = x.logical.size();
    int64_t count = 1;
    for (size_t d = 0; d < rank; ++d)
      if (reduced[d]) count *= x.logical[d];
    x = reduce_keepdims(x, reduced, op);
    if (mean) x = binary(OpCode::kMul, x, scalar(1.f / static_cast<float>(count), rank), x.logical);
    return x.logical == out_shape() ? x : reshape_to(x, out_shape());
  }

  // One TOSA reduction per logical dim marked in `reduced`; the dims stay, as size 1.
  Operand reduce_keepdims(Operand x, const std::vector<bool>& reduced, OpCode op) {
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (!reduced[d]) continue;
      Shape s = x.logical;
      s[d] = 1;
      Operand next = temp(s, x.nhwc);
      emit(op, {x.id}, next.id, AxisAttr{memory_axis(x, static_cast<int64_t>(d))});
      x = next;
    }
    return x;
  }

  // LayerNormalization's Y as TOSA ops: mean and variance by reduce_sum and
  // mul over the normalized dims (two passes, as the portable kernel), then
  // (x - mean) * rsqrt(var + epsilon) * scale + bias.
  Status lower_layer_norm(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const size_t rank = x.logical.size();
    HS_ASSIGN_OR_RETURN(int64_t axis, n.attrs.get_int("axis", -1));
    if (axis < 0) axis += static_cast<int64_t>(rank);
    HS_ASSIGN_OR_RETURN(const float epsilon, n.attrs.get_float("epsilon", 1e-5f));
    std::vector<bool> reduced(rank, false);
    int64_t count = 1;
    for (size_t d = static_cast<size_t>(axis); d < rank; ++d) {
      reduced[d] = true;
      count *= x.logical[d];
    }
    // Row-major (rank other than 4) rows of `count` contiguous elements,
    // with a scale and bias of a row each (a transformer's): one compute
    // segment, a workgroup per row (layer_norm.comp); TOSA has no layer norm.
    const auto full_row = [&](size_t input) {
      return input < n.inputs.size() && n.inputs[input] != kNoValue &&
             g_.value(n.inputs[input]).type.num_elements() == count;
    };
    const bool has_bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
    const int64_t rows = shape_elements(x.logical) / count;
    if (rank != 4 && full_row(1) && (!has_bias || full_row(2)) && rows <= int64_t{65535} * 65535 &&
        count <= int64_t{UINT32_MAX}) {
      HS_ASSIGN_OR_RETURN(const Operand scale, operand(n.inputs[1], rank));
      Operand bias = scale;
      if (has_bias) {
        HS_ASSIGN_OR_RETURN(bias, operand(n.inputs[2], rank));
      }
      const uint64_t gx = std::min<uint64_t>(static_cast<uint64_t>(rows), 65535);
      const std::array<uint32_t, 3> groups = {static_cast<uint32_t>(gx),
                                              static_cast<uint32_t>((static_cast<uint64_t>(rows) + gx - 1) / gx), 1};
      // The segment's push constants: rows, row length, epsilon, has bias
      // (custom_shader puts the element count first).
      bind(custom_shader("layer_norm", kLayerNormSpv, {x.id, scale.id, bias.id}, x,
                         {static_cast<uint32_t>(count), std::bit_cast<uint32_t>(epsilon), has_bias ? 1u : 0u},
                         groups));
      return Status::ok();
    }
    const Operand inv_count = scalar(1.f / static_cast<float>(count), rank);
    Operand mean = reduce_keepdims(x, reduced, OpCode::kReduceSum);
    mean = binary(OpCode::kMul, mean, inv_count, mean.logical);
    const Operand centred = binary(OpCode::kSub, x, mean, x.logical);
    Operand var = reduce_keepdims(binary(OpCode::kMul, centred, centred, x.logical), reduced, OpCode::kReduceSum);
    var = binary(OpCode::kMul, var, inv_count, var.logical);
    const Operand inv_std = unary(OpCode::kRsqrt, binary(OpCode::kAdd, var, scalar(epsilon, rank), var.logical));
    Operand y = binary(OpCode::kMul, centred, inv_std, x.logical);
    HS_ASSIGN_OR_RETURN(const Operand scale, operand(n.inputs[1], rank));
    y = binary(OpCode::kMul, y, scale, x.logical);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      HS_ASSIGN_OR_RETURN(const Operand bias, operand(n.inputs[2], rank));
      y = binary(OpCode::kAdd, y, bias, x.logical);
    }
    bind(y);
    return Status::ok();
  }

  // Where with a constant condition: TOSA select, the bool condition folded
  // to a 0/1 constant.
  Status lower_where(const Node& n) {
    const size_t rank = out_shape().size();
    HS_ASSIGN_OR_RETURN(const Operand c, operand(n.inputs[0], rank));
    HS_ASSIGN_OR_RETURN(const Operand a, operand(n.inputs[1], rank));
    HS_ASSIGN_OR_RETURN(const Operand b, operand(n.inputs[2], rank));
    Operand y = temp(out_shape(), rank == 4);
    emit(OpCode::kSelect, {c.id, a.id, b.id}, y.id);
    bind(y);
    return Status::ok();
  }

  // A TOSA slice of `x` taking `size` elements of logical dim `axis` from
  // `start`, `stride` apart, and everything of the other dims.
  Operand slice_along(const Operand& x, int64_t axis, int64_t start, int64_t size, int64_t stride = 1) {
    Shape logical = x.logical;
    logical[static_cast<size_t>(axis)] = size;
    Operand y = temp(logical, x.nhwc);
    SliceAttr attr;
    for (size_t i = 0; i < logical.size(); ++i) {
      const int64_t d = x.nhwc ? kNchwDim[i] : static_cast<int64_t>(i);
      attr.start.push_back(d == axis ? start : 0);
      attr.size.push_back(logical[static_cast<size_t>(d)]);
      attr.stride.push_back(d == axis ? stride : 1);
    }
    emit(OpCode::kSlice, {x.id}, y.id, std::move(attr));
    return y;
  }

  // Split: one TOSA slice per output.
  Status lower_split(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    HS_ASSIGN_OR_RETURN(int64_t axis, n.attrs.get_int("axis", 0));
    if (axis < 0) axis += static_cast<int64_t>(x.logical.size());
    const Tensor* split = n.inputs.size() > 1 && n.inputs[1] != kNoValue ? g_.value(n.inputs[1]).constant.get() : nullptr;
    HS_ASSIGN_OR_RETURN(const std::vector<int64_t> sizes,
                        split_sizes(n.attrs, g_.opset(), split, x.logical, axis, n.outputs.size()));
    int64_t at = 0;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] != kNoValue) values_[n.outputs[i]] = slice_along(x, axis, at, sizes[i]);
      at += sizes[i];
    }
    return Status::ok();
  }

  // Gather of constant indices: one slice per strided run of the indices
  // (index_runs.h) along the axis, a concat of them, reshaped to the output
  // (the indices' dims in place of the axis; none for a scalar index).
  Status lower_gather(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    HS_ASSIGN_OR_RETURN(int64_t axis, n.attrs.get_int("axis", 0));
    if (axis < 0) axis += static_cast<int64_t>(x.logical.size());
    const int64_t dim = x.logical[static_cast<size_t>(axis)];
    std::vector<int64_t> indices = g_.value(n.inputs[1]).constant->to_int64_vector();
    for (int64_t& i : indices)
      if (i < 0) i += dim;
    std::vector<Operand> parts;
    for (const IndexRun& run : index_runs(indices)) parts.push_back(slice_along(x, axis, run.start, run.count, run.stride));
    bind(reshape_to(concat_along(std::move(parts), axis), out_shape()));
    return Status::ok();
  }

  // Expand and Tile: TOSA tile (Expand's input padded to the output's
  // rank first; its broadcast dims are tiles of size-1 dims).
  Status lower_tile(const Node& n) {
    const size_t rank = out_shape().size();
    HS_ASSIGN_OR_RETURN(const Operand x, operand(n.inputs[0], rank));
    Operand y = temp(out_shape(), rank == 4);
    emit(OpCode::kTile, {x.id}, y.id);
    bind(y);
    return Status::ok();
  }

  Status lower_reduce_mean(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const size_t rank = x.logical.size();
    std::vector<int64_t> axes;
    if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
      axes = g_.value(n.inputs[1]).constant->to_int64_vector();
    } else {
      HS_ASSIGN_OR_RETURN(axes, n.attrs.get_ints("axes", {}));
    }
    HS_ASSIGN_OR_RETURN(const int64_t noop, n.attrs.get_int("noop_with_empty_axes", 0));
    if (axes.empty() && noop) {
      bind(reshape_to(x, out_shape()));
      return Status::ok();
    }
    std::vector<bool> reduced(rank, axes.empty());
    for (int64_t a : axes) reduced[a < 0 ? a + static_cast<int64_t>(rank) : a] = true;
    bind(reduce(x, reduced, OpCode::kReduceSum, true));
    return Status::ok();
  }

  Status lower_reduce_sum_max(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const bool has_axes = n.inputs.size() > 1 && n.inputs[1] != kNoValue;
    HS_ASSIGN_OR_RETURN(const ReduceParams p,
                        reduce_params(n.op, n.attrs, g_.opset(), x.logical, has_axes,
                                      has_axes ? g_.value(n.inputs[1]).constant.get() : nullptr));
    if (p.noop) {
      bind(x);
      return Status::ok();
    }
    bind(reduce(x, p.reduced, n.op == "ReduceSum" ? OpCode::kReduceSum : OpCode::kReduceMax, false));
    return Status::ok();
  }

  Status lower_pad(const Node& n) {
    HS_ASSIGN_OR_RETURN(Operand x, operand(n.inputs[0]));
    const auto constant_input = [&](size_t i) -> const Tensor* {
      return i < n.inputs.size() && n.inputs[i] != kNoValue ? g_.value(n.inputs[i]).constant.get() : nullptr;
    };
    HS_ASSIGN_OR_RETURN(const PadParams p, pad_params(n.attrs, g_.opset(), x.logical, constant_input(1), constant_input(2),
                                                      constant_input(3)));
    const size_t rank = x.logical.size();
    PadAttr attr;
    attr.pad_const = static_cast<float>(p.value);
    for (size_t i = 0; i < rank; ++i) {
      const size_t d = x.nhwc ? static_cast<size_t>(kNchwDim[i]) : i;
      attr.padding.push_back(p.pads[d]);
      attr.padding.push_back(p.pads[rank + d]);
    }
    Operand y = temp(out_shape(), x.nhwc);
    emit(OpCode::kPad, {x.id}, y.id, std::move(attr));
    bind(y);
    return Status::ok();
  }

  const Island& island_;
  const Graph& g_;
  const Node* node_ = nullptr;  // the node being lowered, names the operators
  VgfFile file_;
  std::vector<Operator> pending_;  // the graph segment being built
  std::map<ValueId, Operand> values_;
  std::map<std::pair<ValueId, size_t>, Operand> constants_;
  std::map<std::string, uint32_t> compute_modules_;
  int32_t next_alias_group_ = 0;
};

}  // namespace

Capability check_lowerable(const Graph& graph, NodeId node) {
  Status s = check_node(graph, graph.node(node));
  return s.is_ok() ? Capability::yes() : Capability::no(s.message());
}

Result<VgfFile> lower_island(const Island& island) {
  if (!island.graph) return invalid_argument("failed to lower island " + std::to_string(island.id) + ": no graph");
  Lowerer lowerer(island);
  HS_ASSIGN_OR_RETURN(VgfFile file, lowerer.run());
  if (Status s = check_vgf(file); !s.is_ok())
    return internal_error("failed to lower island " + std::to_string(island.id) + ": the result is invalid: " + s.message());
  return file;
}

}  // namespace hetsched::vgf
