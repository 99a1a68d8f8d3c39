#include "delegates/cpu/xnnpack/segment_plan.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <set>

#include "delegates/cpu/xnnpack/coverage.h"
#include "delegates/cpu/xnnpack/nhwc_ops.h"

namespace hetsched::cpu::xnnpack {

namespace {

constexpr const char* kRelabelOnly = "a segment of re-labelling ops alone is a plain copy, not worth an XNNPACK runtime";

bool is_rank4(const Graph& graph, ValueId v) { return graph.value(v).type.rank() == 4; }

// NCHW and NHWC put the elements of a rank-4 tensor in the same order when
// it has one channel or one pixel.
bool orders_coincide(const Graph& graph, ValueId v) {
  const Shape& s = graph.value(v).type.shape;
  return s.size() == 4 && (s[1] == 1 || s[2] * s[3] == 1);
}

// A Transpose between the two orders of a rank-4 value: perm (0, 2, 3, 1)
// gives, in the graph's order, the bytes of its input held NHWC; perm (0,
// 3, 1, 2) gives, held NHWC, the bytes of its input in the graph's order.
// Either one is a view where that side is kept NHWC (pass 4): ConvNeXt's
// blocks turn to channels-last and back around their linear layers.
enum class OrderTranspose { kNone, kToGraphOrder, kFromGraphOrder };

OrderTranspose order_transpose(const Graph& graph, const Node& node) {
  if (node.op != "Transpose" || node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.size() != 1 ||
      node.outputs[0] == kNoValue || !node.attrs.has("perm"))
    return OrderTranspose::kNone;
  const Value& x = graph.value(node.inputs[0]);
  const Value& y = graph.value(node.outputs[0]);
  if (x.is_constant() || !x.type_known || !y.type_known || x.type.rank() != 4 || !x.type.is_static() ||
      !y.type.is_static() || x.type.dtype != DType::kFloat32 || y.type.dtype != DType::kFloat32)
    return OrderTranspose::kNone;
  const Result<std::vector<int64_t>> perm = node.attrs.get_ints("perm", {});
  if (!perm.is_ok()) return OrderTranspose::kNone;
  if (*perm == std::vector<int64_t>{0, 2, 3, 1}) return OrderTranspose::kToGraphOrder;
  if (*perm == std::vector<int64_t>{0, 3, 1, 2}) return OrderTranspose::kFromGraphOrder;
  return OrderTranspose::kNone;
}

// The values a node reads at run time (constants are laid out at init).
std::vector<ValueId> activations(const Graph& graph, const Node& node) {
  std::vector<ValueId> acts;
  for (ValueId v : node.inputs)
    if (v != kNoValue && !graph.value(v).is_constant()) acts.push_back(v);
  return acts;
}

// Pass 1: each node on its own.
std::vector<NodeCoverage> judge_nodes(const Graph& graph, const std::map<NodeId, std::string>& keep_out) {
  std::vector<NodeCoverage> coverage;
  coverage.reserve(graph.num_nodes());
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    auto it = keep_out.find(n);
    if (it != keep_out.end()) {
      NodeCoverage c;
      c.reason = it->second;
      coverage.push_back(std::move(c));
      continue;
    }
    coverage.push_back(xnnpack_coverage(graph, n));
  }
  return coverage;
}

// Whether an elementwise node free to pick its order should pick NHWC:
// yes when a covered consumer, through a chain of other elementwise nodes,
// needs NHWC, a consumer has an NHWC kernel (nhwc_ops.h) or is a Transpose
// to channels-last (order_transpose). Otherwise the graph's order saves the
// conversions.
class NhwcPreference {
 public:
  NhwcPreference(const Graph& graph, const std::vector<NodeCoverage>& coverage, const std::set<NodeId>& nhwc_kernels)
      : graph_(graph),
        coverage_(coverage),
        nhwc_kernels_(nhwc_kernels),
        consumers_(graph.num_values()),
        memo_(graph.num_nodes()) {
    for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
      for (ValueId v : graph.node(n).inputs)
        if (v != kNoValue) consumers_[v].push_back(n);
  }

  bool wants_nhwc(NodeId node) {
    if (memo_[node]) return *memo_[node];
    bool wants = false;
    for (ValueId out : graph_.node(node).outputs)
      for (NodeId c : consumers_[out]) {
        const NodeCoverage& cov = coverage_[c];
        // A portable node with an NHWC kernel may take NHWC (pass 4).
        if (!cov.covered && (nhwc_kernels_.count(c) || nhwc_kernel_supports(graph_, graph_.node(c)).is_ok() ||
                             order_transpose(graph_, graph_.node(c)) == OrderTranspose::kToGraphOrder))
          wants = true;
        if (!cov.covered) continue;
        if (cov.layout == LayoutNeed::kNhwc || (cov.layout == LayoutNeed::kAny && wants_nhwc(c))) wants = true;
      }
    memo_[node] = wants;
    return wants;
  }

 private:
  const Graph& graph_;
  const std::vector<NodeCoverage>& coverage_;
  const std::set<NodeId>& nhwc_kernels_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<std::optional<bool>> memo_;
};

// Adds `node` to `segment` when the layouts already fixed there allow it,
// fixing the layouts of its inputs and outputs. Leaves `segment` untouched
// and returns false on a conflict.
bool place_node(const Graph& graph, NodeId id, const NodeCoverage& cov, NhwcPreference& preference,
                EngineStep& segment) {
  const Node& node = graph.node(id);
  const std::vector<ValueId> acts = activations(graph, node);
  std::set<TensorLayout> fixed;
  for (ValueId v : acts) {
    auto it = segment.layouts.find(v);
    if (it != segment.layouts.end() && is_rank4(graph, v)) fixed.insert(it->second);
  }
  TensorLayout in_layout = TensorLayout::kNchw;
  TensorLayout out_layout = TensorLayout::kNchw;
  switch (cov.layout) {
    case LayoutNeed::kNhwc:
      if (fixed.count(TensorLayout::kNchw)) return false;
      in_layout = out_layout = TensorLayout::kNhwc;
      break;
    case LayoutNeed::kLogical:
      if (fixed.count(TensorLayout::kNhwc)) return false;
      break;
    case LayoutNeed::kAny:
      if (fixed.size() > 1) return false;
      if (!fixed.empty())
        in_layout = *fixed.begin();
      else if (is_rank4(graph, node.outputs[0]) && preference.wants_nhwc(id))
        in_layout = TensorLayout::kNhwc;
      out_layout = in_layout;
      break;
    case LayoutNeed::kReshape:
      if (fixed.count(TensorLayout::kNhwc)) {
        if (!orders_coincide(graph, acts[0])) return false;
        in_layout = TensorLayout::kNhwc;
      }
      break;
  }
  for (ValueId v : acts)
    segment.layouts.emplace(v, is_rank4(graph, v) ? in_layout : TensorLayout::kNchw);
  for (ValueId v : node.outputs) segment.layouts[v] = is_rank4(graph, v) ? out_layout : TensorLayout::kNchw;
  segment.nodes.push_back(id);
  return true;
}

void add_portable(std::vector<EngineStep>& steps, NodeId node) {
  if (steps.empty() || steps.back().xnnpack || steps.back().nhwc) steps.push_back(EngineStep{});
  steps.back().nodes.push_back(node);
}

// Pass 2: runs of covered nodes become segments.
std::vector<EngineStep> form_segments(const Graph& graph, const std::vector<NodeCoverage>& coverage,
                                      const std::set<NodeId>& nhwc_kernels, std::vector<PortableReason>& portable) {
  NhwcPreference preference(graph, coverage, nhwc_kernels);
  std::vector<EngineStep> steps;
  bool in_segment = false;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const NodeCoverage& cov = coverage[id];
    if (!cov.covered) {
      add_portable(steps, id);
      portable.push_back({id, cov.reason});
      in_segment = false;
      continue;
    }
    if (in_segment && place_node(graph, id, cov, preference, steps.back())) continue;
    EngineStep segment;
    segment.xnnpack = true;
    [[maybe_unused]] const bool placed = place_node(graph, id, cov, preference, segment);
    assert(placed && "a node always fits an empty segment");
    steps.push_back(std::move(segment));
    in_segment = true;
  }

  // A segment that only re-labels memory is cheaper as the portable copy.
  std::vector<EngineStep> kept;
  for (EngineStep& step : steps) {
    const bool relabel_only =
        step.xnnpack && std::all_of(step.nodes.begin(), step.nodes.end(), [&](NodeId n) { return coverage[n].relabel_only; });
    if (!relabel_only) {
      if (!step.xnnpack && !kept.empty() && !kept.back().xnnpack)
        kept.back().nodes.insert(kept.back().nodes.end(), step.nodes.begin(), step.nodes.end());
      else
        kept.push_back(std::move(step));
      continue;
    }
    for (NodeId n : step.nodes) {
      add_portable(kept, n);
      portable.push_back({n, kRelabelOnly});
    }
  }
  std::sort(portable.begin(), portable.end(), [](const PortableReason& a, const PortableReason& b) { return a.node < b.node; });
  return kept;
}

// Pass 3: what each segment reads from and hands to the rest of the island.
void find_boundaries(const Graph& graph, std::vector<EngineStep>& steps) {
  std::vector<int> step_of(graph.num_nodes(), -1);
  for (size_t s = 0; s < steps.size(); ++s)
    for (NodeId n : steps[s].nodes) step_of[n] = static_cast<int>(s);
  const std::set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  for (size_t s = 0; s < steps.size(); ++s) {
    EngineStep& step = steps[s];
    if (!step.xnnpack) continue;
    std::set<ValueId> seen;
    for (NodeId n : step.nodes)
      for (ValueId v : activations(graph, graph.node(n))) {
        const NodeId producer = graph.value(v).producer;
        const bool inside = producer != kNoNode && step_of[producer] == static_cast<int>(s);
        if (!inside && seen.insert(v).second) step.inputs.push_back(v);
      }
    for (NodeId n : step.nodes)
      for (ValueId v : graph.node(n).outputs) {
        const std::vector<NodeId> consumers = graph.consumers(v);
        // A value nobody reads is an output too: XNNPACK gives unread
        // internal values no memory, yet still runs the node writing them.
        bool escapes = graph_outputs.count(v) != 0 || consumers.empty();
        for (NodeId c : consumers) escapes = escapes || step_of[c] != static_cast<int>(s);
        if (escapes) step.outputs.push_back(v);
      }
  }
}

// Pass 4: NHWC steps for the portable nodes that have an NHWC kernel and
// sit between NHWC readers and writers only, and views for the Transposes
// between the two orders (order_transpose) on their NHWC side.
void keep_nhwc_across_portable(const Graph& graph, const std::map<NodeId, std::string>& keep_out,
                               const std::set<NodeId>& nhwc_kernels, const std::set<NodeId>& nchw_input_kernels,
                               EnginePlan& plan) {
  std::vector<EngineStep>& steps = plan.steps;
  std::vector<int> step_of(graph.num_nodes(), -1);
  for (size_t s = 0; s < steps.size(); ++s)
    for (NodeId n : steps[s].nodes) step_of[n] = static_cast<int>(s);
  std::set<NodeId> candidates, to_graph_order, from_graph_order;
  for (const EngineStep& step : steps)
    if (!step.xnnpack)
      for (NodeId n : step.nodes) {
        if (nhwc_kernels.count(n) || nhwc_kernel_supports(graph, graph.node(n)).is_ok()) candidates.insert(n);
        // Not one the caller runs otherwise (attention's layout ops, which
        // its MatMuls read through in the graph's order).
        const OrderTranspose t = keep_out.count(n) ? OrderTranspose::kNone : order_transpose(graph, graph.node(n));
        if (t == OrderTranspose::kToGraphOrder) to_graph_order.insert(n);
        if (t == OrderTranspose::kFromGraphOrder) from_graph_order.insert(n);
      }
  if (candidates.empty() && to_graph_order.empty() && from_graph_order.empty()) return;
  const std::set<ValueId> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  auto segment_nhwc = [&](NodeId n, ValueId v) {
    const EngineStep& step = steps[static_cast<size_t>(step_of[n])];
    auto it = step.layouts.find(v);
    return step.xnnpack && it != step.layouts.end() && it->second == TensorLayout::kNhwc;
  };
  auto resident = [&](ValueId v) {
    const Value& value = graph.value(v);
    if (value.is_constant() || value.producer == kNoNode || graph_outputs.count(v) || !is_rank4(graph, v)) return false;
    if (!candidates.count(value.producer) && !from_graph_order.count(value.producer) && !segment_nhwc(value.producer, v))
      return false;
    const std::vector<NodeId> readers = graph.consumers(v);
    if (readers.empty()) return false;
    for (NodeId r : readers)
      if (!candidates.count(r) && !to_graph_order.count(r) && !segment_nhwc(r, v)) return false;
    return true;
  };
  // A Transpose's other side stays in the graph's order: its input (to
  // NHWC) or output (from it) is never resident, as no NHWC step or view
  // writes (reads) it there.
  const auto keep_if = [](std::set<NodeId>& nodes, const auto& holds) {
    bool changed = false;
    for (auto it = nodes.begin(); it != nodes.end();) {
      if (holds(*it)) {
        ++it;
      } else {
        it = nodes.erase(it);
        changed = true;
      }
    }
    return changed;
  };
  for (bool changed = true; changed;) {
    changed = keep_if(candidates, [&](NodeId n) {
      const Node& node = graph.node(n);
      bool all = true;
      for (ValueId v : node.outputs) all = all && v != kNoValue && resident(v);
      // The island's own inputs stay in the caller's NCHW order; a kernel
      // that reads them so (a stem conv) may still run as an NHWC step.
      for (ValueId v : activations(graph, node))
        all = all && (resident(v) || (nchw_input_kernels.count(n) && is_island_input(graph, v)));
      return all;
    });
    changed = keep_if(to_graph_order, [&](NodeId n) { return resident(graph.node(n).inputs[0]); }) || changed;
    changed = keep_if(from_graph_order, [&](NodeId n) { return resident(graph.node(n).outputs[0]); }) || changed;
  }
  plan.layout_views = to_graph_order;
  plan.layout_views.insert(from_graph_order.begin(), from_graph_order.end());
  for (PortableReason& r : plan.portable)
    if (plan.layout_views.count(r.node)) r.reason += "; a view of the NHWC bytes on its other side";
  if (candidates.empty() && plan.layout_views.empty()) return;
  // All resident sets first: resident() reads the other steps' layouts.
  std::vector<std::set<ValueId>> resident_sets(steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    if (!steps[s].xnnpack) continue;
    for (ValueId v : steps[s].inputs)
      if (resident(v)) resident_sets[s].insert(v);
    for (ValueId v : steps[s].outputs)
      if (resident(v)) resident_sets[s].insert(v);
  }
  std::vector<EngineStep> split;
  for (size_t s = 0; s < steps.size(); ++s) {
    EngineStep& step = steps[s];
    if (step.xnnpack) {
      step.resident_nhwc = std::move(resident_sets[s]);
      split.push_back(std::move(step));
      continue;
    }
    for (NodeId n : step.nodes) {
      if (candidates.count(n)) {
        EngineStep nhwc_step;
        nhwc_step.nhwc = true;
        nhwc_step.nodes = {n};
        split.push_back(std::move(nhwc_step));
      } else {
        add_portable(split, n);
      }
    }
  }
  steps = std::move(split);
  for (PortableReason& r : plan.portable)
    if (candidates.count(r.node)) r.reason += "; runs on its NHWC kernel between segments";
}

}  // namespace

int EnginePlan::xnnpack_ops() const {
  int n = 0;
  for (const EngineStep& s : steps)
    if (s.xnnpack) n += static_cast<int>(s.nodes.size());
  return n;
}

int EnginePlan::xnnpack_segments() const {
  return static_cast<int>(std::count_if(steps.begin(), steps.end(), [](const EngineStep& s) { return s.xnnpack; }));
}

int EnginePlan::portable_ops() const {
  int n = 0;
  for (const EngineStep& s : steps)
    if (!s.xnnpack) n += static_cast<int>(s.nodes.size());
  return n;
}

bool is_island_input(const Graph& graph, ValueId v) {
  const Value& value = graph.value(v);
  return !value.is_constant() && value.producer == kNoNode;
}

EnginePlan plan_engine(const Graph& graph, const std::map<NodeId, std::string>& keep_out,
                       const std::set<NodeId>& nhwc_kernels, const std::set<NodeId>& nchw_input_kernels) {
  EnginePlan plan;
  const std::vector<NodeCoverage> coverage = judge_nodes(graph, keep_out);
  plan.steps = form_segments(graph, coverage, nhwc_kernels, plan.portable);
  find_boundaries(graph, plan.steps);
  keep_nhwc_across_portable(graph, keep_out, nhwc_kernels, nchw_input_kernels, plan);
  return plan;
}

bool drop_nhwc_steps(EnginePlan& plan) {
  bool any = !plan.layout_views.empty();
  plan.layout_views.clear();
  for (EngineStep& step : plan.steps) {
    any = any || step.nhwc || !step.resident_nhwc.empty();
    step.nhwc = false;
    step.nchw_output = false;
    step.resident_nhwc.clear();
  }
  return any;
}

EnginePlan portable_plan(const Graph& graph, const std::string& reason) {
  EnginePlan plan;
  if (graph.num_nodes() == 0) return plan;
  plan.steps.push_back(EngineStep{});
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    plan.steps.back().nodes.push_back(n);
    plan.portable.push_back({n, reason});
  }
  return plan;
}

}  // namespace hetsched::cpu::xnnpack
