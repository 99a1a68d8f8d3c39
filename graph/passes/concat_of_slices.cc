#include "graph/passes/concat_of_slices.h"

#include <optional>
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

// The values of an int32 or int64 constant, if `value` is one.
std::optional<std::vector<int64_t>> constant_ints(const Graph& graph, ValueId value) {
  if (value == kNoValue || !graph.value(value).is_constant()) return std::nullopt;
  const Tensor& t = *graph.value(value).constant;
  std::vector<int64_t> out(static_cast<size_t>(t.num_elements()));
  if (t.dtype() == DType::kInt64) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<int64_t>()[i];
  } else if (t.dtype() == DType::kInt32) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<int32_t>()[i];
  } else {
    return std::nullopt;
  }
  return out;
}

// The indices along `axis` that Slice node `slice` of `source` takes, if it
// slices that axis alone with step 1 and constant bounds.
std::optional<std::vector<int64_t>> slice_indices(const Graph& graph, NodeId slice, ValueId source, int64_t axis) {
  const Node& n = graph.node(slice);
  if (n.op != "Slice" || n.inputs.size() < 3 || n.inputs[0] != source || n.outputs.size() != 1) return std::nullopt;
  const Shape& shape = graph.value(source).type.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  const auto starts = constant_ints(graph, n.inputs[1]);
  const auto ends = constant_ints(graph, n.inputs[2]);
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  int64_t a = 0;
  if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) {
    const auto axes = constant_ints(graph, n.inputs[3]);
    if (!axes || axes->size() != 1) return std::nullopt;
    const Result<int64_t> normalized = normalize_axis((*axes)[0], rank);
    if (!normalized.is_ok()) return std::nullopt;
    a = *normalized;
  }
  if (a != axis) return std::nullopt;
  if (n.inputs.size() > 4 && n.inputs[4] != kNoValue) {
    const auto steps = constant_ints(graph, n.inputs[4]);
    if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
  }
  const SliceRange r = slice_range(shape[static_cast<size_t>(axis)], (*starts)[0], (*ends)[0], 1);
  std::vector<int64_t> indices(static_cast<size_t>(r.length));
  for (int64_t i = 0; i < r.length; ++i) indices[static_cast<size_t>(i)] = r.start + i;
  return indices;
}

}  // namespace

Result<int> concat_of_slices_to_gather(Graph& graph) {
  if (graph.opset() < 10) return 0;  // Slice's bounds were attributes then
  std::vector<bool> keep(graph.num_nodes(), true);
  int rewritten = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& concat = graph.node(id);
    if (concat.op != "Concat" || concat.inputs.size() < 2 || concat.outputs.size() != 1) continue;
    const ValueId first = concat.inputs[0];
    if (first == kNoValue || graph.value(first).producer == kNoNode) continue;
    const ValueId source = graph.node(graph.value(first).producer).inputs[0];
    if (source == kNoValue) continue;
    const Value& src = graph.value(source);
    if (!src.type_known || !src.type.is_static() || src.type.rank() == 0) continue;
    const Result<int64_t> raw_axis = concat.attrs.require_int("axis");
    if (!raw_axis.is_ok()) continue;
    const Result<int64_t> axis = normalize_axis(*raw_axis, static_cast<int64_t>(src.type.rank()));
    if (!axis.is_ok()) continue;
    std::vector<int64_t> indices;
    std::vector<NodeId> slices;
    bool matches = true;
    for (ValueId in : concat.inputs) {
      const NodeId slice = in == kNoValue ? kNoNode : passes::producer_if(graph, in, "Slice", id);
      const auto part = slice == kNoNode ? std::nullopt : slice_indices(graph, slice, source, *axis);
      if (!part) {
        matches = false;
        break;
      }
      indices.insert(indices.end(), part->begin(), part->end());
      slices.push_back(slice);
    }
    if (!matches) continue;
    Tensor idx(TensorType{DType::kInt64, {static_cast<int64_t>(indices.size())}});
    std::copy(indices.begin(), indices.end(), idx.data<int64_t>());
    const ValueId idx_value = graph.add_constant(graph.unique_value_name(concat.name + "_indices"), std::move(idx));
    Node& node = graph.node(id);
    node.op = "Gather";
    node.inputs = {source, idx_value};
    node.attrs = Attributes();
    node.attrs.set("axis", *axis);
    for (NodeId s : slices) keep[static_cast<size_t>(s)] = false;
    ++rewritten;
  }
  if (rewritten > 0) graph.compact(keep);
  return rewritten;
}

}  // namespace hetsched
