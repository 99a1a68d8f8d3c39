#include "graph/passes/remove_identity.h"

#include <algorithm>
#include <string>
#include <vector>

#include "graph/ops_extra.h"
#include "graph/passes/rewrite_util.h"

namespace hetsched {

namespace {

// A pool whose window is one element, stride 1 and no padding: torchvision's
// AlexNet and VGG end in AdaptiveAvgPool2d((6, 6)) / ((7, 7)), which on
// their 224x224 maps is such an AveragePool (XNNPACK has no 1x1 pooling,
// so it ran on the portable kernel). One MaxPool output only (no Indices).
bool is_unit_pool(const Node& node) {
  if ((node.op != "AveragePool" && node.op != "MaxPool") || node.inputs.size() != 1 || node.outputs.size() != 1)
    return false;
  const auto all = [&](const char* name, int64_t want, bool required) {
    if (!node.attrs.has(name)) return !required;
    const Result<std::vector<int64_t>> v = node.attrs.get_ints(name, {});
    return v.is_ok() && !v->empty() && std::all_of(v->begin(), v->end(), [&](int64_t x) { return x == want; });
  };
  const Result<std::string> auto_pad = node.attrs.get_string("auto_pad", "NOTSET");
  return auto_pad.is_ok() && (*auto_pad == "NOTSET" || *auto_pad == "VALID") && all("kernel_shape", 1, true) &&
         all("strides", 1, false) && all("pads", 0, false) && all("dilations", 1, false);
}

bool passes_through(const Graph& graph, const Node& node) {
  if (node.op == "Identity") return node.inputs.size() == 1 && node.outputs.size() == 1;
  if (is_unit_pool(node)) return true;
  if (node.op != "Dropout" || node.inputs.empty() || node.outputs.empty()) return false;
  // A mask someone reads keeps the node (its kernel writes it all true).
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] != kNoValue &&
        (passes::is_graph_output(graph, node.outputs[i]) || !graph.consumers(node.outputs[i]).empty()))
      return false;
  // Dropout that would drop at random stays, for the kernel to refuse.
  const auto constant = [&](size_t i) -> const Tensor* {
    if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return nullptr;
    const Value& v = graph.value(node.inputs[i]);
    return v.is_constant() ? v.constant.get() : nullptr;
  };
  const bool has_training = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  return dropout_passes_through(constant(1), has_training, constant(2)).is_ok();
}

}  // namespace

Result<int> remove_identity_nodes(Graph& graph) {
  std::vector<bool> keep(graph.num_nodes(), true);
  int removed = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& node = graph.node(id);
    if (!passes_through(graph, node) || node.inputs[0] == kNoValue) continue;
    const ValueId in = node.inputs[0];
    const ValueId out = node.outputs[0];
    if (passes::is_graph_output(graph, out)) {
      const NodeId producer = graph.value(in).producer;
      if (producer == kNoNode || passes::is_graph_output(graph, in)) continue;
      const Node& p = graph.node(producer);
      size_t k = 0;
      while (p.outputs[k] != in) ++k;
      passes::take_over_output(graph, producer, k, out);
      passes::replace_uses(graph, in, out);
    } else {
      passes::replace_uses(graph, out, in);
    }
    keep[static_cast<size_t>(id)] = false;
    ++removed;
  }
  if (removed > 0) graph.compact(keep);
  return removed;
}

}  // namespace hetsched
