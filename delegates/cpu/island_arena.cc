#include "delegates/cpu/island_arena.h"

#include <algorithm>
#include <string>

#include "memory/arena_planner.h"

namespace hetsched::cpu {

namespace {

// 64: a cache line, and the alignment the fast kernels' AVX-512 loads and
// XNNPACK's external values expect of a tensor.
constexpr uint64_t kAlignment = 64;

bool is_view_op(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
}

}  // namespace

std::map<ValueId, ValueId> island_views(const Graph& graph, const xnnpack::EnginePlan& plan,
                                        const fast::FastPlan& fast) {
  std::map<ValueId, ValueId> views;
  const auto& inputs = graph.inputs();
  for (const xnnpack::EngineStep& step : plan.steps) {
    if (step.xnnpack || step.nhwc) continue;
    for (NodeId n : step.nodes) {
      const Node& node = graph.node(n);
      if (!is_view_op(node.op) || fast.on_fast_kernel[n] || fast.in_group(n) || node.outputs.size() != 1 ||
          node.inputs.empty() || node.inputs[0] == kNoValue)
        continue;
      const ValueId in = node.inputs[0], out = node.outputs[0];
      const Value& x = graph.value(in);
      const Value& y = graph.value(out);
      if (x.is_constant() || graph.is_output(out) || std::find(inputs.begin(), inputs.end(), out) != inputs.end() ||
          !x.type_known || !y.type_known || x.type.dtype != y.type.dtype || !x.type.is_static() ||
          !y.type.is_static() || x.type.num_elements() != y.type.num_elements())
        continue;
      const auto up = views.find(in);
      views[out] = up == views.end() ? in : up->second;  // steps run in order: `in`'s view, if any, is known
    }
  }
  return views;
}

Result<IslandArena> plan_island_arena(const Graph& graph, const xnnpack::EnginePlan& plan, const fast::FastPlan& fast) {
  const size_t num_nodes = graph.num_nodes();
  // The step each node runs at: its plan step, or for a fused group's
  // members the step of the node the group runs with.
  std::vector<int> run_step(num_nodes, -1);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (NodeId n : plan.steps[s].nodes) run_step[n] = static_cast<int>(s);
  const auto join = [&](const std::vector<NodeId>& nodes, NodeId lead) {
    for (NodeId n : nodes) run_step[n] = run_step[lead];
  };
  for (const fast::LinearGroup& g : fast.linear) join(g.nodes(), g.matmul);
  for (const fast::ConvGroup& g : fast.conv_groups) join(g.nodes(), g.conv);
  for (const fast::SiluGroup& g : fast.silu) join(g.nodes(), g.mul);
  for (const fast::AffineGroup& g : fast.affine) join(g.nodes(), g.lead());

  // Nodes whose kernel is a portable one (which may rely on its output
  // starting zeroed, as a fresh tensor does).
  std::vector<bool> portable_kernel(num_nodes, false);
  for (const xnnpack::EngineStep& step : plan.steps) {
    if (step.xnnpack || step.nhwc) continue;
    for (NodeId n : step.nodes) portable_kernel[n] = !fast.on_fast_kernel[n] && !fast.in_group(n);
  }

  const auto& inputs = graph.inputs();
  const auto is_edge = [&](ValueId v) {
    return std::find(inputs.begin(), inputs.end(), v) != inputs.end() || graph.is_output(v);
  };
  IslandArena out;
  out.views = island_views(graph, plan, fast);
  const std::map<ValueId, ValueId>& views = out.views;
  std::vector<memory::BufferRequest> requests;
  std::vector<ValueId> values;
  for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
    if (run_step[n] < 0 || portable_kernel[n]) continue;
    for (ValueId v : graph.node(n).outputs) {
      if (v == kNoValue || is_edge(v)) continue;
      const Value& value = graph.value(v);
      if (value.is_constant() || !value.type_known || !value.type.is_static()) continue;
      const std::optional<size_t> bytes = checked_byte_size(value.type);
      if (!bytes) continue;
      int first = run_step[n], last = run_step[n];
      bool all_read = true;
      std::vector<NodeId> readers = graph.consumers(v);
      for (size_t i = 0; i < readers.size(); ++i) {
        const NodeId r = readers[i];
        // A view's readers read v's bytes (views of views included).
        if (const auto view = views.find(graph.node(r).outputs.empty() ? kNoValue : graph.node(r).outputs[0]);
            view != views.end() && view->second == v)
          for (NodeId rr : graph.consumers(view->first)) readers.push_back(rr);
        all_read = all_read && run_step[r] >= 0;
        first = std::min(first, run_step[r]);
        last = std::max(last, run_step[r]);
      }
      if (!all_read) continue;
      // Written and read by one step: inside a segment XNNPACK's workspace
      // holds it, inside a fused group it never exists, and a value nobody
      // reads gets a buffer of its own when a step asks for one.
      if (first == last) continue;
      requests.push_back({std::to_string(v), *bytes, kAlignment, first, last});
      values.push_back(v);
    }
  }
  HS_ASSIGN_OR_RETURN(const memory::ArenaPlan arena, memory::plan_arena(requests));
  out.bytes = arena.planned_bytes;
  for (size_t i = 0; i < values.size(); ++i) out.placed.emplace_back(values[i], arena.offsets[i]);
  return out;
}

}  // namespace hetsched::cpu
