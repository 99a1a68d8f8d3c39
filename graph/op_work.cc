#include "graph/op_work.h"

#include <map>
#include <sstream>
#include <variant>
#include <string>

namespace hetsched {

namespace {

double elements(const Graph& graph, ValueId v) {
  if (v == kNoValue) return 0;
  const Value& value = graph.value(v);
  if (!value.type_known || !value.type.is_static()) return 0;
  double n = 1;
  for (int64_t d : value.type.shape) n *= static_cast<double>(d);
  return n;
}

double bytes_of(const Graph& graph, ValueId v) {
  if (v == kNoValue) return 0;
  return elements(graph, v) * static_cast<double>(dtype_size(graph.value(v).type.dtype));
}

// Dimension k of value v, or 0 when unknown.
double dim(const Graph& graph, ValueId v, size_t k) {
  if (v == kNoValue) return 0;
  const Value& value = graph.value(v);
  if (!value.type_known || k >= value.type.shape.size() || value.type.shape[k] < 0) return 0;
  return static_cast<double>(value.type.shape[k]);
}

// Product of the spatial dims of a conv weight (dims 2..).
double kernel_area(const Graph& graph, ValueId weight) {
  const Value& w = graph.value(weight);
  if (!w.type_known) return 0;
  double area = 1;
  for (size_t k = 2; k < w.type.shape.size(); ++k) area *= static_cast<double>(std::max<int64_t>(w.type.shape[k], 0));
  return area;
}

const std::map<std::string, OpClass, std::less<>>& class_table() {
  static const std::map<std::string, OpClass, std::less<>> table = [] {
    std::map<std::string, OpClass, std::less<>> t;
    for (const char* op : {"Conv", "ConvTranspose", "QLinearConv", "ConvInteger"}) t[op] = OpClass::kConv;
    // The recurrent ops are GEMMs by X.W^T and, per time step, H.R^T.
    for (const char* op : {"MatMul", "Gemm", "QLinearMatMul", "MatMulInteger", "RNN", "GRU", "LSTM"})
      t[op] = OpClass::kMatMul;
    for (const char* op : {"ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "Softmax",
                           "LogSoftmax", "AveragePool", "MaxPool", "GlobalAveragePool", "GlobalMaxPool",
                           "LayerNormalization", "InstanceNormalization", "GroupNormalization", "MeanVarianceNormalization",
                           "ArgMax", "ArgMin"})
      t[op] = OpClass::kReduce;
    for (const char* op : {"Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "Pad", "Resize",
                           "Tile", "Expand", "ConstantOfShape", "Range", "GridSample", "ReverseSequence",
                           "RoiAlign"})
      t[op] = OpClass::kMovement;
    for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Shape", "Dropout", "Constant"})
      t[op] = OpClass::kFree;
    return t;
  }();
  return table;
}

}  // namespace

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::kConv: return "conv";
    case OpClass::kMatMul: return "matmul";
    case OpClass::kElementwise: return "elementwise";
    case OpClass::kReduce: return "reduce";
    case OpClass::kMovement: return "movement";
    case OpClass::kFree: return "free";
  }
  return "?";
}

std::optional<OpClass> op_class_from_name(std::string_view name) {
  for (OpClass c : kAllOpClasses)
    if (op_class_name(c) == name) return c;
  return std::nullopt;
}

OpClass op_class_of(std::string_view op) {
  auto it = class_table().find(op);
  return it == class_table().end() ? OpClass::kElementwise : it->second;
}

OpWork op_work(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  OpWork work;
  work.op_class = op_class_of(node.op);
  if (work.op_class == OpClass::kFree) return work;
  for (ValueId v : node.inputs) work.bytes += bytes_of(graph, v);
  double out_elements = 0;
  for (ValueId v : node.outputs) {
    work.bytes += bytes_of(graph, v);
    out_elements += elements(graph, v);
  }
  const ValueId x = node.inputs.empty() ? kNoValue : node.inputs[0];
  // QLinearConv's weight is its input 3 (after x, x_scale, x_zero_point).
  const size_t w_index = node.op == "QLinearConv" ? 3 : 1;
  const ValueId w = node.inputs.size() > w_index ? node.inputs[w_index] : kNoValue;
  if ((node.op == "Conv" || node.op == "QLinearConv" || node.op == "ConvInteger") && w != kNoValue) {
    // Each output element: Cin/group × kernel multiply-adds.
    work.flops = 2 * out_elements * dim(graph, w, 1) * kernel_area(graph, w);
  } else if (node.op == "ConvTranspose" && w != kNoValue) {
    // Each input element scatters into Cout/group × kernel outputs.
    work.flops = 2 * elements(graph, x) * dim(graph, w, 1) * kernel_area(graph, w);
  } else if (node.op == "RNN" || node.op == "GRU" || node.op == "LSTM") {
    // Every step of every direction: batch x (input + hidden) x gates*hidden
    // multiply-adds; W is [dirs, gates*hidden, input].
    const bool batch_first = node.attrs.get_int("layout", 0).value_or(0) != 0;
    const double steps = dim(graph, x, batch_first ? 1 : 0), batch = dim(graph, x, batch_first ? 0 : 1);
    const double hidden = static_cast<double>(node.attrs.get_int("hidden_size", 0).value_or(0));
    work.flops = 2 * steps * batch * dim(graph, w, 0) * (dim(graph, x, 2) + hidden) * dim(graph, w, 1);
  } else if (work.op_class == OpClass::kMatMul) {
    // K is A's last dim (Gemm: its first with transA).
    const Value& a = graph.value(x);
    double k = 0;
    if (a.type_known && !a.type.shape.empty()) {
      const bool trans_a = node.op == "Gemm" && node.attrs.get_int("transA", 0).value_or(0) != 0;
      k = dim(graph, x, trans_a ? 0 : a.type.shape.size() - 1);
    }
    work.flops = 2 * out_elements * k;
  } else if (work.op_class == OpClass::kReduce) {
    // Pools read a window per output; reductions and norms a few ops per input.
    const bool pool = node.op == "AveragePool" || node.op == "MaxPool";
    double window = 1;
    if (pool)
      for (int64_t k : node.attrs.get_ints("kernel_shape", {}).value_or(std::vector<int64_t>{})) window *= static_cast<double>(k);
    work.flops = pool ? out_elements * window : 5 * elements(graph, x);
  } else if (work.op_class == OpClass::kElementwise) {
    work.flops = out_elements;
  }
  return work;
}

namespace {

std::string value_signature(const Graph& graph, ValueId v) {
  if (v == kNoValue) return "_";
  const Value& value = graph.value(v);
  const std::string type = value.type_known ? value.type.to_string() : "?";
  return value.is_constant() ? "c:" + type : type;
}

template <typename T>
void write_list(std::ostringstream& out, const std::vector<T>& list) {
  out << '[';
  for (size_t i = 0; i < list.size(); ++i) out << (i ? "," : "") << list[i];
  out << ']';
}

}  // namespace

std::string op_signature(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  std::ostringstream out;
  out.precision(9);
  out << node.op << '(';
  for (size_t i = 0; i < node.inputs.size(); ++i) out << (i ? "," : "") << value_signature(graph, node.inputs[i]);
  out << ")->";
  for (size_t i = 0; i < node.outputs.size(); ++i) out << (i ? "," : "") << value_signature(graph, node.outputs[i]);
  out << '{';
  bool first = true;
  for (const auto& [name, attr] : node.attrs.all()) {
    out << (first ? "" : ",") << name << '=';
    first = false;
    std::visit(
        [&](const auto& a) {
          using A = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<A, Tensor>) {
            out << "tensor:" << a.type().to_string();
          } else if constexpr (std::is_same_v<A, std::vector<int64_t>> || std::is_same_v<A, std::vector<float>>) {
            write_list(out, a);
          } else {
            out << a;
          }
        },
        attr);
  }
  out << '}';
  return out.str();
}

}  // namespace hetsched
