#include "delegates/cpu/island_arena.h"

#include <algorithm>
#include <string>
#include <utility>

#include "delegates/cpu/fast/rule_choice.h"
#include "delegates/cpu/fast/strided_view.h"
#include "memory/arena_planner.h"

namespace hetsched::cpu {

namespace {

// HETSCHED_RESIDUAL_IN_PLACE=off gives a residual group's output a buffer of
// its own again (A/B runs).
bool rule_choice_residual_in_place() {
  return fast::rule_choice("HETSCHED_RESIDUAL_IN_PLACE") != fast::RuleChoice::kOff;
}

// HETSCHED_OVERWRITE_INPUT=off: every LayerNormalization, Gelu and Erf
// output has bytes of its own (A/B runs).
bool rule_choice_overwrite_input() {
  return fast::rule_choice("HETSCHED_OVERWRITE_INPUT") != fast::RuleChoice::kOff;
}

// Ops whose fast kernel reads each row or element before writing it, so
// they may run in place (fast/layer_norm.cc, fast/activation_pass.h; not
// Softmax, whose kernel reads and writes through restrict pointers).
bool overwrites_input(const Node& node) {
  if (node.outputs.empty() || node.outputs[0] == kNoValue || node.inputs.empty()) return false;
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] != kNoValue) return false;  // LayerNormalization's Mean or InvStdDev
  return node.op == "LayerNormalization" || node.op == "Gelu" || node.op == "Erf";
}

// 64: a cache line, and the alignment the fast kernels' AVX-512 loads and
// XNNPACK's external values expect of a tensor.
constexpr uint64_t kAlignment = 64;

bool is_view_op(const Graph& graph, const Node& node) {
  const std::string& op = node.op;
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return true;
  // A Transpose moving only axes of size 1 (PyTorch's [1, S, d] -> [S, 1,
  // d] before attention's QKV projection and back after it): a copy each
  // before, 0.1 ms at BERT-base's [1, 128, 768].
  return op == "Transpose" && fast::keeps_elements_in_place(graph, node);
}

}  // namespace

bool concat_input_in_place(const Graph& graph, const Node& concat, size_t i) {
  // HETSCHED_CONCAT_IN_PLACE=off: every input copied again (A/B runs).
  static const bool off = fast::rule_choice("HETSCHED_CONCAT_IN_PLACE") == fast::RuleChoice::kOff;
  if (off || concat.op != "Concat" || concat.outputs.size() != 1 || i >= concat.inputs.size()) return false;
  const ValueId v = concat.inputs[i], out = concat.outputs[0];
  const auto& inputs = graph.inputs();
  const auto edge = [&](ValueId x) {
    return graph.is_output(x) || std::find(inputs.begin(), inputs.end(), x) != inputs.end();
  };
  if (v == kNoValue || out == kNoValue || edge(v) || edge(out) || graph.value(v).is_constant()) return false;
  const std::vector<NodeId> readers = graph.consumers(v);
  return readers.size() == 1 && std::count(concat.inputs.begin(), concat.inputs.end(), v) == 1;
}

std::map<ValueId, ValueId> island_views(const Graph& graph, const xnnpack::EnginePlan& plan,
                                        const fast::FastPlan& fast) {
  std::map<ValueId, ValueId> views;
  const auto& inputs = graph.inputs();
  for (const xnnpack::EngineStep& step : plan.steps) {
    if (step.xnnpack || step.nhwc) continue;
    for (NodeId n : step.nodes) {
      const Node& node = graph.node(n);
      // A Transpose has a fast kernel, which a view spares. One between the
      // two orders with its NHWC side kept NHWC is a view whatever it moves.
      const bool layout_view = plan.layout_views.count(n) != 0;
      if (!(layout_view || is_view_op(graph, node)) || (fast.on_fast_kernel[n] && node.op != "Transpose") ||
          fast.in_group(n) || node.outputs.size() != 1 || node.inputs.empty() || node.inputs[0] == kNoValue)
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
  // And the node it runs at: a portable step runs many nodes, in order.
  std::vector<NodeId> run_at(num_nodes, kNoNode);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (NodeId n : plan.steps[s].nodes) {
      run_step[n] = static_cast<int>(s);
      run_at[n] = n;
    }
  const auto join = [&](const std::vector<NodeId>& nodes, NodeId lead) {
    for (NodeId n : nodes) {
      run_step[n] = run_step[lead];
      run_at[n] = run_at[lead];
    }
  };
  for (const fast::LinearGroup& g : fast.linear) join(g.nodes(), g.matmul);
  for (const fast::ConvGroup& g : fast.conv_groups) join(g.nodes(), g.conv);
  for (const fast::SiluGroup& g : fast.silu) join(g.nodes(), g.mul);
  for (const fast::SeGroup& g : fast.se) join(g.nodes(), g.mul);
  for (const fast::AffineGroup& g : fast.affine) join(g.nodes(), g.lead());
  for (const fast::StridedMatMul& g : fast.strided) join(g.nodes(), g.matmul);
  // Values a strided MatMul reads in place of its operands (through the
  // layout ops it folds: attention_plan.h), at its step: they live until then.
  std::map<ValueId, std::vector<NodeId>> strided_readers;
  for (const fast::StridedMatMul& g : fast.strided)
    for (ValueId root : {g.a.root, g.b.root}) strided_readers[root].push_back(g.matmul);
  const auto readers_of = [&](ValueId v) {
    std::vector<NodeId> readers = graph.consumers(v);
    if (const auto s = strided_readers.find(v); s != strided_readers.end())
      readers.insert(readers.end(), s->second.begin(), s->second.end());
    return readers;
  };

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
  const std::map<ValueId, ValueId> reshaped = out.views;  // the Reshape-like ones
  for (const auto& [view, root] : reshaped) out.view_nodes.insert(graph.value(view).producer);
  // A 1x1 conv group's output takes over its residual's bytes where the
  // group is the residual's last reader: the epilogue reads each element of
  // the residual just before it writes the same element of the output, so
  // the output costs no memory of its own and its stores hit lines the
  // residual's loads just brought in (no separate read-for-ownership).
  if (rule_choice_residual_in_place())
    for (const fast::ConvGroup& g : fast.conv_groups) {
      const ValueId r = g.residual;
      // A residual added after the activation is read after the output's
      // tiles were stored: it needs bytes of its own.
      if (r == kNoValue || g.add_last || is_edge(g.output) || is_edge(r) || reshaped.count(r) || out.views.count(g.output)) continue;
      const Value& residual = graph.value(r);
      const Value& output = graph.value(g.output);
      if (residual.is_constant() || residual.producer == kNoNode || portable_kernel[residual.producer] ||
          run_step[residual.producer] < 0 || !residual.type_known || !output.type_known || residual.type != output.type)
        continue;
      // The residual may itself have taken over another value's bytes (the
      // block before wrote its output in place): the output becomes a view
      // of that value, the bytes' one root, so that the root's lifetime
      // covers every view's readers (a view of a view was never placed).
      const auto up = out.views.find(r);
      const ValueId root = up == out.views.end() ? r : up->second;
      if (is_edge(root)) continue;
      // Every value with those bytes (the root and its views): none is the
      // conv's own input (read by every tile while outputs are written),
      // and none is read after the group.
      std::vector<ValueId> sharing{root};
      for (const auto& [view, of] : out.views)
        if (of == root) sharing.push_back(view);
      const int at = run_step[g.conv];
      bool last = true;
      for (ValueId v : sharing) {
        last = last && graph.node(g.conv).inputs[0] != v;
        for (NodeId reader : readers_of(v)) last = last && run_step[reader] >= 0 && run_step[reader] <= at;
      }
      if (last) out.views[g.output] = root;
    }
  // A LayerNormalization, Gelu or Erf on its fast kernel writes its output
  // over its input where it is the input's last reader: each reads a row
  // (or element) before writing it, and its stores then find the lines its
  // loads brought in, where a buffer of its own, last written long before,
  // is read for ownership from memory (BERT-base's LayerNorms: 60 us each
  // for 128 x 768 floats at one thread). HETSCHED_OVERWRITE_INPUT=off
  // gives each its own bytes (A/B runs).
  if (rule_choice_overwrite_input())
    for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
      const Node& node = graph.node(n);
      if (!fast.on_fast_kernel[n] || fast.in_group(n) || !overwrites_input(node) || run_step[n] < 0) continue;
      const ValueId x = node.inputs[0], y = node.outputs[0];
      if (is_edge(x) || is_edge(y) || out.views.count(y)) continue;
      // x may be a view (ConvNeXt's LayerNorm reads its Transpose's, a
      // layout view): y then takes over its root's bytes.
      const auto up = out.views.find(x);
      const ValueId root = up == out.views.end() ? x : up->second;
      const Value& rv = graph.value(root);
      const Value& xv = graph.value(x);
      const Value& yv = graph.value(y);
      if (is_edge(root) || rv.is_constant() || rv.producer == kNoNode || portable_kernel[rv.producer] ||
          run_step[rv.producer] < 0 || !xv.type_known || !yv.type_known || xv.type != yv.type || !rv.type_known ||
          checked_byte_size(rv.type) != checked_byte_size(yv.type))
        continue;
      // Every other reader of those bytes runs before it: at an earlier
      // step, or earlier in the same portable step.
      std::vector<ValueId> sharing{root};
      for (const auto& [view, of] : out.views)
        if (of == root) sharing.push_back(view);
      bool last = true;
      for (ValueId v : sharing)
        for (NodeId reader : readers_of(v))
          last = last && run_step[reader] >= 0 &&
                 std::make_pair(run_step[reader], run_at[reader]) <= std::make_pair(run_step[n], run_at[n]);
      if (!last) continue;
      // The views of y (a Reshape after it) are views of the root now.
      for (auto& [view, of] : out.views)
        if (of == y) of = root;
      out.views[y] = root;
    }
  const std::map<ValueId, ValueId>& views = out.views;
  // Each root's views, whose readers read the root's bytes.
  std::map<ValueId, std::vector<ValueId>> views_of;
  for (const auto& [view, root] : views) views_of[root].push_back(view);
  std::vector<memory::BufferRequest> requests;
  std::vector<ValueId> values;
  for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
    // An elided layout node's output never exists (attention_plan.h).
    if (run_step[n] < 0 || portable_kernel[n] || fast.elided.count(n)) continue;
    for (ValueId v : graph.node(n).outputs) {
      if (v == kNoValue || is_edge(v) || views.count(v)) continue;  // a view has its root's bytes
      const Value& value = graph.value(v);
      if (value.is_constant() || !value.type_known || !value.type.is_static()) continue;
      const std::optional<size_t> bytes = checked_byte_size(value.type);
      if (!bytes) continue;
      int first = run_step[n], last = run_step[n];
      // A Concat's output is written from its in-place inputs' producers'
      // steps on (concat_input_in_place).
      const Node& node = graph.node(n);
      if (node.op == "Concat" && plan.steps[static_cast<size_t>(run_step[n])].nhwc)
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          const NodeId p = concat_input_in_place(graph, node, i) ? graph.value(node.inputs[i]).producer : kNoNode;
          if (p != kNoNode && run_step[p] >= 0) first = std::min(first, run_step[p]);
        }
      bool all_read = true;
      std::vector<NodeId> readers = readers_of(v);
      // A view's readers read v's bytes (views of views included: each
      // maps to the first non-view up its chain).
      if (const auto of = views_of.find(v); of != views_of.end())
        for (ValueId view : of->second)
          for (NodeId r : readers_of(view)) readers.push_back(r);
      for (size_t i = 0; i < readers.size(); ++i) {
        const NodeId r = readers[i];
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
