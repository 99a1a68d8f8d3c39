#include "delegates/vulkan/op_support.h"

#include <algorithm>
#include <string>

#include "delegates/vulkan/kernel_params.h"
#include "delegates/vulkan/lowering.h"
#include "delegates/vulkan/movement_semantics.h"
#include "delegates/vulkan/norm_semantics.h"
#include "delegates/vulkan/op_semantics.h"
#include "graph/ops_extra.h"

namespace hetsched::vulkan {

namespace {

// The foundation op set, by family: elementwise, NN, data movement.
// clang-format off
constexpr std::string_view kOps[] = {
    "Add", "Sub", "Mul", "Div", "Pow", "Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Clip", "HardSigmoid",
    "HardSwish", "Sin", "Cos", "Reciprocal", "Sqrt", "Erf", "Gelu", "Floor", "Ceil", "Log", "Round", "Min", "Max",
    "Where",
    "Conv", "ConvTranspose", "BatchNormalization", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalAveragePool",
    "Softmax",
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "LayerNormalization", "GroupNormalization",
    "Transpose", "Reshape", "Flatten", "Identity", "Squeeze", "Unsqueeze", "Concat", "Slice", "Gather",
    "GatherElements", "Resize", "Split", "Expand", "Tile", "Pad", "Cast", "Dropout",
};
// clang-format on

// Inputs that only steer shape inference or the host-side lowering (shapes,
// axes, slice bounds, scales, indices): they are never bound as f32 data.
bool is_meta_input(std::string_view op, size_t i) {
  if (i == 0) return false;
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || is_reduce_op(op) || op == "Slice" ||
      op == "Resize" || op == "Gather" || op == "GatherElements" || op == "Split" || op == "Expand" || op == "Tile" ||
      op == "Pad" || op == "Dropout")
    return true;
  return false;
}

// The dtypes either side of a Cast may have (cast_*.comp; f16 or bf16 <->
// anything but f32 goes through f32 in two dispatches).
bool is_cast_dtype(DType d) {
  return d == DType::kFloat32 || is_half_float(d) || d == DType::kInt32 || d == DType::kInt64 || d == DType::kBool;
}

// The checks every tensor a node reads as data or writes must pass. Tensors
// are f32, except either side of a Cast (`cast`): an fp16 model's edges, and
// the integer and bool tensors a model casts to or from.
std::string check_tensor(const Value& v, const char* role, const DeviceLimits& limits, bool cast = false) {
  const std::string who = std::string(role) + " '" + v.name + "'";
  if (!v.type_known) return "shape of " + who + " is not inferred";
  if (is_half_float(v.type.dtype) && cast && !limits.storage_buffer_16bit_access)
    return std::string(dtype_name(v.type.dtype)) + " " + who + " needs storageBuffer16BitAccess, which this device lacks";
  if (v.type.dtype == DType::kBool && cast && !limits.storage_buffer_8bit_access)
    return "bool " + who + " needs storageBuffer8BitAccess, which this device lacks";
  if (v.type.dtype != DType::kFloat32 && !(cast && is_cast_dtype(v.type.dtype)))
    return "dtype " + std::string(dtype_name(v.type.dtype)) + " not supported (" + who + ")";
  if (!v.type.is_static()) return "dynamic shape " + shape_to_string(v.type.shape) + " not supported (" + who + ")";
  if (v.type.num_elements() == 0) return "empty tensor " + v.type.to_string() + " not supported (" + who + ")";
  if (v.type.rank() > kMaxRank)
    return "rank " + std::to_string(v.type.rank()) + " > " + std::to_string(kMaxRank) + " not supported (" + who + ")";
  if (v.type.byte_size() > limits.max_storage_buffer_range)
    return "tensor '" + v.name + "' of " + std::to_string(v.type.byte_size()) +
           " bytes exceeds maxStorageBufferRange " + std::to_string(limits.max_storage_buffer_range);
  return {};
}

Capability from(const Status& s) { return s.is_ok() ? Capability::yes() : Capability::no(s.message()); }

Capability grid_fits(uint64_t groups, const char* what, const DeviceLimits& limits) {
  if (groups > limits.max_workgroups_per_dim)
    return Capability::no(std::string(what) + " needs " + std::to_string(groups) +
                          " workgroups in one grid dimension, more than maxComputeWorkGroupCount " +
                          std::to_string(limits.max_workgroups_per_dim));
  return Capability::yes();
}

uint64_t tiles(int64_t n) { return static_cast<uint64_t>((n + kGemmTile - 1) / kGemmTile); }

// Op-specific checks, after every tensor passed check_tensor.
Capability check_op(const Graph& graph, NodeId id, const DeviceLimits& limits) {
  const Node& n = graph.node(id);
  const std::string& op = n.op;
  auto shape_of = [&](size_t i) -> const Shape& { return graph.value(n.inputs[i]).type.shape; };
  if (op == "Clip" || op == "HardSigmoid") return from(read_unary_op(graph, id).status());
  if (op == "BatchNormalization") return from(read_batch_norm(graph, id).status());
  if (op == "Conv") {
    if (Result<std::optional<UnaryOp>> act = read_conv_activation(n); !act.is_ok()) return from(act.status());
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] != kNoValue && !graph.value(n.inputs[i]).is_constant())
        return Capability::no(std::string(i == 1 ? "weight W" : "bias B") + " must be a constant");
    const Shape& w = shape_of(1);
    const Shape& y = graph.value(n.outputs[0]).type.shape;
    Result<Window2d> win = window_2d(n.attrs, shape_of(0), std::vector<int64_t>(w.begin() + 2, w.end()), y, false);
    if (!win.is_ok()) return from(win.status());
    Result<int64_t> group = n.attrs.get_int("group", 1);
    if (!group.is_ok()) return from(group.status());
    // conv2d.comp packs a tap's displacement into 16 bits per axis.
    const int64_t extent = std::max((win->kernel_h - 1) * win->dilation_h, (win->kernel_w - 1) * win->dilation_w);
    if (extent > 0xFFFF)
      return Capability::no("dilated kernel extent " + std::to_string(extent + 1) + " exceeds 65536");
    const int64_t pixels = y[0] * win->out_h * win->out_w;
    Capability c = grid_fits(tiles(pixels), "Conv's output pixels", limits);
    if (c.supported) c = grid_fits(static_cast<uint64_t>(*group), "Conv's groups", limits);
    return c;
  }
  if (op == "ConvTranspose") {
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] != kNoValue && !graph.value(n.inputs[i]).is_constant())
        return Capability::no(std::string(i == 1 ? "weight W" : "bias B") + " must be a constant");
    Result<ConvTransposeGeometry> geo = conv_transpose_geometry(n.attrs, shape_of(0), shape_of(1));
    if (!geo.is_ok()) return from(geo.status());
    if (geo->in.size() > 2)
      return Capability::no("only 1-D and 2-D ConvTranspose is supported, got " + std::to_string(geo->in.size()) +
                            "-D (the CPU runs it)");
    return Capability::yes();
  }
  if (op == "MaxPool" || op == "AveragePool") {
    Result<std::vector<int64_t>> kernel = n.attrs.require_ints("kernel_shape");
    if (!kernel.is_ok()) return from(kernel.status());
    Result<int64_t> ceil_mode = n.attrs.get_int("ceil_mode", 0);
    if (!ceil_mode.is_ok()) return from(ceil_mode.status());
    return from(
        window_2d(n.attrs, shape_of(0), *kernel, graph.value(n.outputs[0]).type.shape, *ceil_mode != 0).status());
  }
  if (op == "MatMul") {
    Result<MatmulLayout> layout = matmul_layout(shape_of(0), shape_of(1));
    if (!layout.is_ok()) return from(layout.status());
    Capability c = grid_fits(tiles(layout->m), "MatMul's rows", limits);
    if (c.supported) c = grid_fits(tiles(layout->n), "MatMul's columns", limits);
    if (c.supported) c = grid_fits(static_cast<uint64_t>(layout->batch_count()), "MatMul's batch", limits);
    return c;
  }
  if (op == "Gemm") {
    const Shape& y = graph.value(n.outputs[0]).type.shape;
    Capability c = grid_fits(tiles(y[0]), "Gemm's rows", limits);
    if (c.supported) c = grid_fits(tiles(y[1]), "Gemm's columns", limits);
    return c;
  }
  if (op == "Gelu") return from(read_unary_op(graph, id).status());
  if ((op == "Min" || op == "Max") && n.inputs.size() != 2)
    return Capability::no(op + " of " + std::to_string(n.inputs.size()) + " inputs not supported (two are)");
  if (op == "Where") {
    const Value& cond = graph.value(n.inputs[0]);
    if (!cond.is_constant())
      return Capability::no(
          "Where's condition must be a constant (bool tensors computed at run time are not supported)");
    if (cond.type.dtype != DType::kBool) return Capability::no("Where's condition must be bool");
    return Capability::yes();
  }
  if (op == "LayerNormalization" || op == "GroupNormalization") {
    // Mean and InvStdDev are training outputs; a graph that reads them runs on the CPU.
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] != kNoValue && (!graph.consumers(n.outputs[i]).empty() || graph.is_output(n.outputs[i])))
        return Capability::no("LayerNormalization's Mean and InvStdDev outputs not supported (only Y is)");
    return from(read_normalization(graph, id).status());
  }
  if (op == "Split") return from(read_split(graph, id).status());
  if (op == "Pad") return from(read_pad(graph, id).status());
  if (op == "Expand" || op == "Tile") {
    if (!graph.value(n.inputs[1]).is_constant())
      return Capability::no(op + "'s " + (op == "Expand" ? "shape" : "repeats") + " must be a constant");
    return Capability::yes();
  }
  if (is_reduce_op(op)) return from(read_reduce_axes(graph, id).status());
  if (op == "Slice") return from(read_slice(graph, graph.node(id)).status());
  if (op == "Gather" || op == "GatherElements") return from(read_gather_indices(graph, id).status());
  if (op == "Resize") return from(resize_taps(graph, id).status());
  return Capability::yes();
}

}  // namespace

std::span<const std::string_view> vulkan_ops() { return kOps; }

Capability vulkan_supports(const Graph& graph, NodeId node, const DeviceLimits& limits) {
  const Node& n = graph.node(node);
  if (std::find(std::begin(kOps), std::end(kOps), n.op) == std::end(kOps))
    return Capability::no("op " + n.op + " not implemented");
  // Extra outputs that only training or index tracking would fill.
  if (n.outputs.size() > 1) {
    if (n.op == "MaxPool") return Capability::no("MaxPool's Indices output not supported");
    if (n.op == "BatchNormalization") return Capability::no("BatchNormalization training outputs not supported");
    if (n.op == "Dropout") return Capability::no("Dropout's mask output not supported (inference only)");
  }
  // Cast converts between f32, f16, i32, i64 and bool (cast_*.comp); any
  // other dtype is refused by check_tensor like everywhere else.
  const bool f16_ok = n.op == "Cast";
  for (ValueId out : n.outputs) {
    const std::string why = check_tensor(graph.value(out), "output", limits, f16_ok);
    if (!why.empty()) return Capability::no(why);
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] == kNoValue || is_meta_input(n.op, i)) continue;
    // Clip's bounds are scalars folded into the op, Where's condition a
    // bool constant uploaded as f32 (both checked in check_op).
    if (n.op == "Clip" && i > 0) continue;
    if (n.op == "Where" && i == 0) continue;
    const std::string why = check_tensor(graph.value(n.inputs[i]), "input", limits, f16_ok);
    if (!why.empty()) return Capability::no(why);
  }
  return check_op(graph, node, limits);
}

}  // namespace hetsched::vulkan
