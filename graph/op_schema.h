// The op set: for each supported op, its arity and its shape inference.
//
// Ops follow ONNX operator semantics (names, attributes, broadcasting). Each
// op family registers its schemas from its own file (ops_*.cc) through one
// register_* function listed in op_set.cc — there is no static-initialiser
// magic, so the table is complete whenever it is read.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"

namespace hetsched {

// What an op's shape function sees: its node, its input types and any input
// that is a constant (Reshape's shape, Slice's starts, Gather's indices...).
class InferContext {
 public:
  InferContext(const Graph& graph, NodeId node) : graph_(graph), node_id_(node), node_(graph.node(node)) {}

  const Graph& graph() const { return graph_; }
  const Node& node() const { return node_; }
  const Attributes& attrs() const { return node_.attrs; }
  int opset() const { return graph_.opset(); }
  size_t num_inputs() const { return node_.inputs.size(); }
  // True when input i is present (not omitted with an empty name).
  bool has_input(size_t i) const { return i < node_.inputs.size() && node_.inputs[i] != kNoValue; }
  const TensorType& input_type(size_t i) const { return graph_.value(node_.inputs.at(i)).type; }
  // The constant behind input i, or nullptr when the input is computed at run time.
  const Tensor* input_constant(size_t i) const {
    if (!has_input(i)) return nullptr;
    return graph_.value(node_.inputs[i]).constant.get();
  }
  // An error prefixed with "node 'name' (Op): ".
  Status error(const std::string& what) const { return invalid_argument(graph_.describe_node(node_id_) + ": " + what); }
  Status unsupported_error(const std::string& what) const {
    return unsupported(graph_.describe_node(node_id_) + ": " + what);
  }

 private:
  const Graph& graph_;
  NodeId node_id_;
  const Node& node_;
};

// Fills `outputs` (one per node output) from the inputs. Returns an error
// naming what is wrong with the node (use ctx.error()).
using InferFn = std::function<Status(const InferContext& ctx, std::vector<TensorType>& outputs)>;

struct OpSchema {
  std::string name;
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  // False for ops that only re-label memory (Reshape, Flatten, Identity...):
  // the partitioner does not count them towards an island's size.
  bool is_compute = true;
  InferFn infer;
};

using OpSchemaTable = std::map<std::string, OpSchema, std::less<>>;

// Per-family registration, one per ops_*.cc file.
void register_elementwise_ops(OpSchemaTable& table);  // ops_elementwise.cc: binary + unary math, activations
void register_nn_ops(OpSchemaTable& table);           // ops_nn.cc: Conv, BatchNormalization, MatMul, Gemm, pools, Softmax, ReduceMean
void register_tensor_ops(OpSchemaTable& table);       // ops_tensor.cc: Transpose, Reshape, Flatten, Concat, Slice, Gather, GatherElements, Resize
void register_extra_ops(OpSchemaTable& table);        // ops_extra.cc: the further ops ONNX imports need (Cast, Shape, Pad, ConvTranspose...)
void register_norm_ops(OpSchemaTable& table);         // ops_norm.cc: LayerNormalization, GroupNormalization, MeanVarianceNormalization
void register_activation_ops(OpSchemaTable& table);   // ops_activation.cc: Elu, Selu, Softplus, trigonometry, ...
void register_misc_ops(OpSchemaTable& table);         // ops_misc.cc: Size, IsNaN, IsInf, DepthToSpace, CumSum, ...
void register_recurrent_ops(OpSchemaTable& table);    // ops_recurrent.cc: RNN, GRU, LSTM
void register_quant_ops(OpSchemaTable& table);        // ops_quant.cc: QuantizeLinear, DequantizeLinear, QLinearConv, ...

// The full table. Thread-safe; built on first use.
const OpSchemaTable& op_schemas();
// nullptr when the op is not in the set.
const OpSchema* find_op_schema(std::string_view op);

// Shape helpers shared by op files.
// ONNX multidirectional (numpy) broadcasting of two shapes.
Result<Shape> broadcast_shapes(const Shape& a, const Shape& b);
// ONNX Slice along one axis of size `dim` (> 0) with `step` != 0: the first
// index read (negative start/end counted from the end, then clamped to
// [0, dim] or, for negative steps, [-1, dim - 1]) and how many elements the
// slice has. Written so INT64_MAX/INT64_MIN starts, ends and steps cannot
// overflow. Shape inference and every engine use it, so they agree.
struct SliceRange {
  int64_t start = 0;
  int64_t length = 0;
};
SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step);
// Normalises a possibly negative axis into [0, rank); error when out of range.
Result<int64_t> normalize_axis(int64_t axis, int64_t rank);

// For the op files' shape functions, which report plain reasons: puts
// "node 'n' (Op): " in front and keeps the status code.
InferFn with_node_context(InferFn fn);
// "what must be f32, got i64[2]" unless `type` is f32.
Status require_f32(const TensorType& type, const std::string& what);

}  // namespace hetsched
