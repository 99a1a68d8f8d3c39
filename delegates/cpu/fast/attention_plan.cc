#include "delegates/cpu/fast/attention_plan.h"

#include <algorithm>
#include <map>
#include <optional>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/rule_choice.h"

namespace hetsched::cpu::fast {

namespace {

// Whether the kernel reads `view` as operand A (slot 0: its rows read in
// place, so its columns must be contiguous) or B (slot 1: packed, from rows
// or from columns).
bool operand_readable(const StridedView& view, size_t slot) {
  const size_t r = view.shape.size();
  const bool rows_contiguous = view.shape[r - 1] == 1 || view.strides[r - 1] == 1;
  const bool columns_contiguous = view.shape[r - 2] == 1 || view.strides[r - 2] == 1;
  return slot == 0 ? rows_contiguous : rows_contiguous || columns_contiguous;
}

// Whether the kernel writes C through `view`: its rows with a row stride.
bool output_writable(const StridedView& view) {
  const size_t r = view.shape.size();
  return view.shape[r - 1] == 1 || view.strides[r - 1] == 1;
}

// The layout nodes after `matmul`'s output that it can write through, the
// longest run first: each the one reader of the value before, none elided,
// no graph output before the last. Transposes, the Reshape kin and scalar
// Mul or Div only (a Slice, Gather or Split would leave some of C unwritten).
std::vector<NodeId> out_chain(const Graph& graph, NodeId matmul, const std::set<NodeId>& excluded,
                              const std::vector<bool>& elided) {
  std::vector<NodeId> chain;
  ValueId cur = graph.node(matmul).outputs[0];
  while (!graph.is_output(cur)) {
    const std::vector<NodeId> readers = graph.consumers(cur);
    if (readers.size() != 1) break;
    const NodeId r = readers[0];
    const Node& node = graph.node(r);
    if (excluded.count(r) || elided[static_cast<size_t>(r)] || !is_layout_node(graph, node) ||
        node.op == "Slice" || node.op == "Gather" || node.op == "Split" || data_input(graph, node) != cur)
      break;
    chain.push_back(r);
    cur = node.outputs[0];
  }
  return chain;
}

// The Add reading `v` (the one reader, no graph output) with another
// input, a static f32 value of at most v's rank that exists before
// `matmul` runs and broadcasts to v's shape along every dim but the last
// (C's columns, which the epilogue reads as vectors), and v's shape out.
// kNoNode otherwise.
NodeId mask_add_after(const Graph& graph, NodeId matmul, ValueId v, const std::set<NodeId>& excluded) {
  if (graph.is_output(v)) return kNoNode;
  const std::vector<NodeId> readers = graph.consumers(v);
  if (readers.size() != 1 || excluded.count(readers[0])) return kNoNode;
  const Node& add = graph.node(readers[0]);
  if (add.op != "Add" || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return kNoNode;
  const ValueId m = add.inputs[0] == v ? add.inputs[1] : add.inputs[0];
  const Value& mv = graph.value(m);
  const Shape& c = graph.value(v).type.shape;
  if (!mv.type_known || !mv.type.is_static() || mv.type.dtype != DType::kFloat32 || mv.type.rank() > c.size() ||
      mv.type.rank() == 0 || mv.type.shape.back() != c.back() || !(graph.value(add.outputs[0]).type == graph.value(v).type))
    return kNoNode;
  for (size_t i = 0; i < mv.type.rank(); ++i) {
    const int64_t d = mv.type.shape[mv.type.rank() - 1 - i];
    if (d != 1 && d != c[c.size() - 1 - i]) return kNoNode;
  }
  if (!mv.is_constant() && mv.producer != kNoNode && mv.producer >= matmul) return kNoNode;
  return readers[0];
}

}  // namespace

std::vector<NodeId> StridedMatMul::nodes() const {
  std::vector<NodeId> n{matmul};
  n.insert(n.end(), out_chain.begin(), out_chain.end());
  if (mask_add != kNoNode) n.push_back(mask_add);
  return n;
}

bool StridedMatMul::folds() const {
  return !out_chain.empty() || mask_add != kNoNode || a.scale != 1.f || b.scale != 1.f || c.scale != 1.f;
}

bool is_strided_matmul_candidate(const Graph& graph, const Node& node) {
  if (node.op != "MatMul" || node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  for (ValueId v : node.inputs) {
    const Value& value = graph.value(v);
    if (value.is_constant() || !value.type_known || !value.type.is_static() || value.type.rank() < 2 ||
        value.type.dtype != DType::kFloat32)
      return false;
  }
  return fast_op_supports(graph, node, 1).is_ok();  // the batched MatMul's kernel has no rule of threads
}

AttentionPlan plan_attention_strides(const Graph& graph, const std::set<NodeId>& excluded) {
  AttentionPlan plan;
  if (rule_choice("HETSCHED_ATTENTION_STRIDES") == RuleChoice::kOff) return plan;
  const size_t num_nodes = graph.num_nodes();
  // Each layout node's output as a window of the first value up its chain
  // that no layout node made (or whose layout node could not be expressed
  // as strides): nodes are in topological order, so an input's view is
  // known before its readers'.
  std::map<ValueId, StridedView> view;
  for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
    const Node& node = graph.node(n);
    if (excluded.count(n) || !is_layout_node(graph, node)) continue;
    const ValueId x = data_input(graph, node);
    const Value& xv = graph.value(x);
    if (xv.is_constant() || !xv.type_known || !xv.type.is_static()) continue;
    const auto up = view.find(x);
    const StridedView input = up != view.end() ? up->second : contiguous_view(x, xv.type.shape);
    for (size_t o = 0; o < node.outputs.size(); ++o)
      if (const std::optional<StridedView> v = apply_layout_node(graph, node, input, o)) view[node.outputs[o]] = *v;
  }
  std::vector<bool> candidate(num_nodes, false);
  for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n)
    candidate[static_cast<size_t>(n)] = !excluded.count(n) && is_strided_matmul_candidate(graph, graph.node(n));
  // Whether MatMul `m` reads its operands equal to `v` through v's view.
  const auto reads_through = [&](NodeId m, ValueId v) {
    if (!candidate[static_cast<size_t>(m)]) return false;
    const Node& node = graph.node(m);
    for (size_t slot = 0; slot < 2; ++slot)
      if (node.inputs[slot] == v && !operand_readable(view.at(v), slot)) return false;
    return true;
  };
  // A layout node runs no step when every reader of its outputs reads
  // through it: a MatMul that takes the window, or another such node
  // (readers come later in the order, so theirs is decided first).
  std::vector<bool> elided(num_nodes, false);
  for (NodeId n = static_cast<NodeId>(num_nodes); n-- > 0;) {
    const Node& node = graph.node(n);
    if (excluded.count(n) || !is_layout_node(graph, node)) continue;
    bool all = true;
    for (ValueId out : node.outputs) {
      if (!all) break;
      if (!view.count(out) || graph.is_output(out)) all = false;
      if (!all) break;
      const std::vector<NodeId> readers = graph.consumers(out);
      all = !readers.empty();
      for (NodeId r : readers) all = all && (elided[static_cast<size_t>(r)] || reads_through(r, out));
    }
    elided[static_cast<size_t>(n)] = all;
  }
  for (NodeId n = 0; n < static_cast<NodeId>(num_nodes); ++n) {
    if (!candidate[static_cast<size_t>(n)]) continue;
    const Node& node = graph.node(n);
    StridedMatMul m;
    m.matmul = n;
    // An operand whose layout node runs no step is read through its window.
    const auto operand = [&](ValueId v) {
      const Value& value = graph.value(v);
      const bool through = value.producer != kNoNode && elided[static_cast<size_t>(value.producer)];
      return through ? view.at(v) : contiguous_view(v, value.type.shape);
    };
    m.a = operand(node.inputs[0]);
    m.b = operand(node.inputs[1]);
    // The longest run of the layout nodes after it that C can be written
    // through.
    const std::vector<NodeId> chain = out_chain(graph, n, excluded, elided);
    for (size_t length = chain.size() + 1; length-- > 0;) {
      const ValueId y = length == 0 ? node.outputs[0] : graph.node(chain[length - 1]).outputs[0];
      std::optional<StridedView> c = contiguous_view(y, graph.value(y).type.shape);
      for (size_t i = length; c && i-- > 0;) c = invert_layout_node(graph, graph.node(chain[i]), *c);
      if (!c || !output_writable(*c)) continue;
      m.c = *c;
      m.output = y;
      m.out_chain.assign(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(length));
      break;
    }
    // A mask added to C as the MatMul wrote it (scalar factors only between):
    // the epilogue adds it, and C is the Add's output.
    bool scalars_only = true;
    for (NodeId r : m.out_chain) scalars_only = scalars_only && (graph.node(r).op == "Mul" || graph.node(r).op == "Div");
    if (scalars_only && output_writable(m.c) && m.c.offset == 0)
      if (const NodeId add = mask_add_after(graph, n, m.output, excluded); add != kNoNode) {
        const Node& a = graph.node(add);
        m.mask_add = add;
        m.mask = a.inputs[0] == m.output ? a.inputs[1] : a.inputs[0];
        const float scale = m.c.scale;
        m.output = a.outputs[0];
        m.c = contiguous_view(m.output, graph.value(m.output).type.shape);
        m.c.scale = scale;
      }
    if (m.a.root != node.inputs[0] || m.b.root != node.inputs[1] || m.folds()) plan.matmuls.push_back(std::move(m));
  }
  for (size_t n = 0; n < num_nodes; ++n)
    if (elided[n]) plan.elided.insert(static_cast<NodeId>(n));
  return plan;
}

}  // namespace hetsched::cpu::fast
