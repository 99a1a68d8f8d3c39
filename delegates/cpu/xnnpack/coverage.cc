#include "delegates/cpu/xnnpack/coverage.h"

#include <xnnpack.h>

#include <functional>
#include <map>
#include <string_view>

#include "delegates/cpu/xnnpack/op_params.h"
#include "graph/op_schema.h"

namespace hetsched::cpu::xnnpack {

namespace {

// Decides the layout need of a node whose generic checks passed, or says
// why XNNPACK cannot run it.
using CoverFn = std::function<Result<LayoutNeed>(const Graph& graph, const Node& node)>;

const TensorType& type_of(const Graph& graph, ValueId v) { return graph.value(v).type; }

bool is_constant(const Graph& graph, ValueId v) { return graph.value(v).is_constant(); }

Result<LayoutNeed> cover_conv(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const ConvParams p, read_conv(graph, node));
  (void)p;
  return LayoutNeed::kNhwc;
}

Result<LayoutNeed> cover_conv_transpose(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const ConvTransposeParams p, read_conv_transpose(graph, node));
  (void)p;
  return LayoutNeed::kNhwc;
}

Result<LayoutNeed> cover_pool(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const PoolParams p, read_pool(graph, node));
  (void)p;
  return LayoutNeed::kNhwc;
}

Result<LayoutNeed> cover_global_pool(const Graph& graph, const Node& node) {
  if (type_of(graph, node.inputs[0]).rank() != 4)
    return unsupported("only rank-4 X maps to XNNPACK's 2-D global pooling");
  return LayoutNeed::kNhwc;
}

// keepdims: [N,C,1,1], NHWC like GlobalAveragePool's; otherwise [N,C],
// which is the same bytes in either order.
Result<LayoutNeed> cover_spatial_mean(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const bool keepdims, read_spatial_mean(graph, node));
  (void)keepdims;
  return LayoutNeed::kNhwc;
}

Result<LayoutNeed> cover_resize(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const ResizeParams p, read_resize(graph, node));
  (void)p;
  return LayoutNeed::kNhwc;
}

Result<LayoutNeed> cover_fully_connected(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const FullyConnectedParams p, read_fully_connected(graph, node));
  (void)p;
  return LayoutNeed::kLogical;
}

// XNNPACK broadcasts as numpy does. In NHWC a lower-rank operand would line
// up with the wrong axes, so a run-time operand of lower rank than a rank-4
// output keeps the graph's order; constants are re-laid at init instead.
Result<LayoutNeed> cover_binary(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2)
    return unsupported(std::to_string(node.inputs.size()) + " operands; XNNPACK's elementwise ops take two");
  if (is_constant(graph, node.inputs[0]) && is_constant(graph, node.inputs[1]))
    return unsupported("both operands are constants");
  const size_t out_rank = type_of(graph, node.outputs[0]).rank();
  for (ValueId v : node.inputs)
    if (!is_constant(graph, v) && out_rank == 4 && type_of(graph, v).rank() != 4) return LayoutNeed::kLogical;
  return LayoutNeed::kAny;
}

Result<LayoutNeed> cover_unary(const Graph& graph, const Node& node) {
  if (is_constant(graph, node.inputs[0])) return unsupported("the input is a constant");
  return LayoutNeed::kAny;
}

Result<LayoutNeed> cover_clamp(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const Clamp c, read_clamp(graph, node));
  (void)c;
  return cover_unary(graph, node);
}

Result<LayoutNeed> cover_hard_sigmoid(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const ChannelAffine a, read_hard_sigmoid(node));
  (void)a;
  return cover_unary(graph, node);
}

Result<LayoutNeed> cover_softmax(const Graph& graph, const Node& node) {
  const int64_t rank = static_cast<int64_t>(type_of(graph, node.inputs[0]).rank());
  // Before opset 13 Softmax normalises everything from `axis` on; on the
  // last axis both forms are XNNPACK's softmax over the innermost dim.
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, node.attrs.get_int("axis", graph.opset() >= 13 ? -1 : 1));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, rank));
  if (axis != rank - 1) return unsupported("axis " + std::to_string(axis) + ": XNNPACK's softmax runs over the last axis only");
  return LayoutNeed::kLogical;
}

Result<LayoutNeed> cover_batch_norm(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const ChannelAffine a, read_batch_norm(graph, node));
  (void)a;
  return LayoutNeed::kAny;
}

Result<LayoutNeed> cover_leaky_relu(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const float alpha, node.attrs.get_float("alpha", 0.01f));
  (void)alpha;
  return cover_unary(graph, node);
}

// Pads are re-laid with the tensor, so the op follows its input's order.
Result<LayoutNeed> cover_pad(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const PadParams p, read_pad(graph, node));
  (void)p;
  return cover_unary(graph, node);
}

Result<LayoutNeed> cover_prelu(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const std::vector<float> slopes, read_prelu_slopes(graph, node));
  (void)slopes;
  HS_RETURN_IF_ERROR(cover_unary(graph, node).status());
  return LayoutNeed::kNhwc;
}

Result<LayoutNeed> cover_reshape(const Graph& graph, const Node& node) { return cover_unary(graph, node); }

const std::map<std::string, CoverFn, std::less<>>& cover_table() {
  static const auto* table = new std::map<std::string, CoverFn, std::less<>>{
      {"Conv", cover_conv},
      {"ConvTranspose", cover_conv_transpose},
      {"MaxPool", cover_pool},
      {"AveragePool", cover_pool},
      {"GlobalAveragePool", cover_global_pool},
      {"ReduceMean", cover_spatial_mean},
      {"Resize", cover_resize},
      {"Gemm", cover_fully_connected},
      {"MatMul", cover_fully_connected},
      {"Add", cover_binary},
      {"Sub", cover_binary},
      {"Mul", cover_binary},
      {"Div", cover_binary},
      {"Max", cover_binary},
      {"Min", cover_binary},
      {"Sum", cover_binary},
      {"Relu", cover_clamp},
      {"Clip", cover_clamp},
      {"Sigmoid", cover_unary},
      {"HardSwish", cover_unary},
      {"HardSigmoid", cover_hard_sigmoid},
      {"Abs", cover_unary},
      {"Neg", cover_unary},
      {"Sqrt", cover_unary},
      {"Floor", cover_unary},
      {"Ceil", cover_unary},
      {"Round", cover_unary},
      {"LeakyRelu", cover_leaky_relu},
      {"PRelu", cover_prelu},
      {"Pad", cover_pad},
      {"Softmax", cover_softmax},
      {"BatchNormalization", cover_batch_norm},
      {"Reshape", cover_reshape},
      {"Flatten", cover_reshape},
      {"Squeeze", cover_reshape},
      {"Unsqueeze", cover_reshape},
      {"Identity", cover_reshape},
  };
  return *table;
}

bool is_relabel(std::string_view op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity";
}

// Inputs read as data (not Reshape's shape, Clip's bounds or Resize's
// scales): those must be f32 for XNNPACK.
size_t data_inputs(const Node& node) {
  if (is_relabel(node.op) || node.op == "Resize" || node.op == "Clip" || node.op == "Pad" || node.op == "ReduceMean")
    return 1;
  return node.inputs.size();
}

// What every covered node shares: static f32 tensors of a rank XNNPACK
// takes, none of them empty.
Status check_tensors(const Graph& graph, const Node& node) {
  auto check = [&](ValueId v, const char* role) -> Status {
    const Value& value = graph.value(v);
    if (!value.type_known || !value.type.is_static())
      return unsupported(std::string(role) + " '" + value.name + "' has no static shape");
    if (value.type.dtype != DType::kFloat32)
      return unsupported(std::string(role) + " '" + value.name + "' is " + value.type.to_string() +
                         "; XNNPACK runs f32 only");
    if (value.type.rank() > XNN_MAX_TENSOR_DIMS)
      return unsupported(std::string(role) + " '" + value.name + "' has rank " + std::to_string(value.type.rank()) +
                         " (XNNPACK: at most " + std::to_string(XNN_MAX_TENSOR_DIMS) + ")");
    if (!value.is_constant() && value.type.num_elements() == 0)
      return unsupported(std::string(role) + " '" + value.name + "' is empty");
    return Status::ok();
  };
  if (node.inputs.empty() || node.inputs[0] == kNoValue) return unsupported("no input");
  for (size_t i = 0; i < data_inputs(node); ++i)
    if (node.inputs[i] != kNoValue) HS_RETURN_IF_ERROR(check(node.inputs[i], "input"));
  for (ValueId v : node.outputs) HS_RETURN_IF_ERROR(check(v, "output"));
  if (type_of(graph, node.outputs[0]).rank() == 0) return unsupported("a scalar output");
  return Status::ok();
}

}  // namespace

NodeCoverage xnnpack_coverage(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  NodeCoverage c;
  auto it = cover_table().find(node.op);
  if (it == cover_table().end()) {
    c.reason = "op " + node.op + " has no XNNPACK mapping";
    return c;
  }
  Status tensors = check_tensors(graph, node);
  if (!tensors.is_ok()) {
    c.reason = tensors.message();
    return c;
  }
  Result<LayoutNeed> need = it->second(graph, node);
  if (!need.is_ok()) {
    c.reason = need.status().message();
    return c;
  }
  c.covered = true;
  c.layout = is_relabel(node.op) ? LayoutNeed::kReshape : *need;
  c.relabel_only = is_relabel(node.op);
  return c;
}

}  // namespace hetsched::cpu::xnnpack
