#include "delegates/vulkan/movement_semantics.h"

#include <string>

#include "graph/op_schema.h"
#include "graph/ops_extra.h"

namespace hetsched::vulkan {

namespace {

// Input i as a constant; nullptr when omitted. kUnsupported when computed.
Result<const Tensor*> constant_or_absent(const Graph& graph, const Node& n, size_t i, const std::string& what) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return static_cast<const Tensor*>(nullptr);
  const Value& v = graph.value(n.inputs[i]);
  if (!v.is_constant()) return unsupported(what + " must be a constant");
  return v.constant.get();
}

}  // namespace

Result<SplitParts> read_split(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  const Shape& x = graph.value(n.inputs[0]).type.shape;
  HS_ASSIGN_OR_RETURN(const Tensor* split, constant_or_absent(graph, n, 1, "Split's split sizes"));
  HS_ASSIGN_OR_RETURN(const int64_t raw_axis, n.attrs.get_int("axis", 0));
  SplitParts parts;
  HS_ASSIGN_OR_RETURN(parts.axis, normalize_axis(raw_axis, static_cast<int64_t>(x.size())));
  HS_ASSIGN_OR_RETURN(parts.sizes, split_sizes(n.attrs, graph.opset(), split, x, parts.axis, n.outputs.size()));
  return parts;
}

Result<PadMaps> read_pad(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  const Shape& x = graph.value(n.inputs[0]).type.shape;
  const Tensor* parts[4] = {};
  for (size_t i = 1; i < 4; ++i) {
    HS_ASSIGN_OR_RETURN(parts[i], constant_or_absent(graph, n, i, "Pad's pads, constant_value and axes"));
  }
  HS_ASSIGN_OR_RETURN(const PadParams p, pad_params(n.attrs, graph.opset(), x, parts[1], parts[2], parts[3]));
  const size_t rank = x.size();
  PadMaps maps;
  maps.value = static_cast<float>(p.value);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = x[d];
    const int64_t out = in + p.pads[d] + p.pads[rank + d];
    if (out < 0) return invalid_argument("pads crop dim " + std::to_string(d) + " below 0");
    if (p.mode == "reflect" && (p.pads[d] >= in || p.pads[rank + d] >= in))
      return invalid_argument("reflect pads must be smaller than dim " + std::to_string(d));
    std::vector<int64_t>& map = maps.source.emplace_back(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) map[static_cast<size_t>(o)] = pad_source_index(o - p.pads[d], in, p.mode);
  }
  return maps;
}

}  // namespace hetsched::vulkan
