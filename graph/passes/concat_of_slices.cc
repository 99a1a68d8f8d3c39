#include "graph/passes/concat_of_slices.h"

#include <numeric>
#include <optional>
#include <vector>

#include "graph/op_schema.h"
#include "graph/passes/rewrite_util.h"
#include "graph/slice_window.h"

namespace hetsched {

namespace {

// The indices along `axis` that Slice node `slice` of `source` takes, if it
// takes every element of the other dims and a run along `axis` (step 1).
std::optional<std::vector<int64_t>> slice_indices(const Graph& graph, NodeId slice, ValueId source, int64_t axis) {
  const Node& n = graph.node(slice);
  if (n.op != "Slice" || n.inputs.empty() || n.inputs[0] != source || n.outputs.size() != 1) return std::nullopt;
  const Result<SliceWindow> w = read_slice(graph, n);
  if (!w.is_ok()) return std::nullopt;
  const Shape& in = graph.value(source).type.shape;
  for (size_t d = 0; d < in.size(); ++d) {
    if (w->step[d] != 1) return std::nullopt;
    if (static_cast<int64_t>(d) != axis && (w->start[d] != 0 || w->shape[d] != in[d])) return std::nullopt;
  }
  const size_t a = static_cast<size_t>(axis);
  std::vector<int64_t> indices(static_cast<size_t>(w->shape[a]));
  std::iota(indices.begin(), indices.end(), w->start[a]);
  return indices;
}

}  // namespace

Result<int> concat_of_slices_to_gather(Graph& graph) {
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
