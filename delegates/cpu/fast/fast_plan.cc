#include "delegates/cpu/fast/fast_plan.h"

#include <algorithm>

#include "delegates/cpu/fast/dense_conv_rule.h"
#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/pointwise_rule.h"
#include "graph/op_work.h"

namespace hetsched::cpu::fast {

namespace {

// A segment of one node that has a fast kernel runs on that kernel
// instead: alone, the segment pays a staging copy and XNNPACK's dispatch
// for one op (attention's Softmax between two batched MatMuls: 12 us in a
// segment, 6 on its fast kernel). Only segments in the graph's order, so
// that no value kept NHWC for a neighbour changes hands.
void prefer_fast_for_lone_nodes(const Graph& graph, xnnpack::EnginePlan& plan) {
  for (xnnpack::EngineStep& step : plan.steps) {
    if (!step.xnnpack || step.nodes.size() != 1) continue;
    bool graph_order = step.resident_nhwc.empty();
    for (const auto& [v, layout] : step.layouts) graph_order = graph_order && layout == TensorLayout::kNchw;
    const NodeId n = step.nodes[0];
    if (!graph_order || !fast_op_beats_lone_segment(graph, graph.node(n))) continue;
    step = xnnpack::EngineStep{false, false, step.nodes, {}, {}, {}, {}};
    plan.portable.push_back({n, "alone in its segment; its fast kernel costs less"});
  }
}

}  // namespace

xnnpack::EnginePlan plan_with_fast_kernels(const Graph& graph, FastPlan& plan_out) {
  plan_out.linear = find_linear_groups(graph);
  for (size_t i = 0; i < plan_out.linear.size(); ++i) {
    plan_out.linear_at[plan_out.linear[i].matmul] = i;
    for (NodeId n : plan_out.linear[i].nodes())
      if (n != plan_out.linear[i].matmul) plan_out.in_linear.insert(n);
  }
  std::map<NodeId, std::string> keep_out = linear_keep_out(plan_out.linear);
  std::set<NodeId> nhwc_kernels, dense;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    if (depthwise_conv_leaves_xnnpack(graph, graph.node(n)))
      keep_out[n] = "a depthwise conv whose kernel size XNNPACK has no micro-kernel for; on its fast kernel";
    if (winograd_conv_leaves_xnnpack(graph, graph.node(n))) {
      keep_out[n] = "a dense 3x3 stride-1 conv; on the fast Winograd F(4x4,3x3) kernel";
      nhwc_kernels.insert(n);
    } else if (dense_conv_leaves_xnnpack(graph, graph.node(n))) {
      dense.insert(n);
    }
  }
  // A dense conv leaves XNNPACK only where it then runs as an NHWC step:
  // in the graph's order the conversions around it cost more than the
  // GEMM saves (SqueezeNet's expand 3x3s, whose Concat partners stay in
  // graph order, ran 22% slower taken out). HETSCHED_DENSE_CONV=on keeps
  // every one (tests of the graph-order path).
  const bool dense_forced = dense_conv_choice() == DenseConvChoice::kOn;
  const char* const kDenseReason =
      "a dense conv XNNPACK runs slower at this shape; on the fast GEMM, its windows gathered";
  for (bool changed = !dense_forced; changed && !dense.empty();) {
    std::map<NodeId, std::string> out = keep_out;
    std::set<NodeId> nhwc = nhwc_kernels;
    for (NodeId n : dense) {
      out[n] = kDenseReason;
      nhwc.insert(n);
    }
    changed = false;
    for (const xnnpack::EngineStep& step : xnnpack::plan_engine(graph, out, nhwc).steps)
      if (!step.xnnpack && !step.nhwc)
        for (NodeId n : step.nodes) changed = dense.erase(n) > 0 || changed;
  }
  for (NodeId n : dense) {
    keep_out[n] = kDenseReason;
    nhwc_kernels.insert(n);
  }
  // A SiLU leaves XNNPACK for its one-pass kernel. A rank-4 one only where
  // it then runs as NHWC steps, between segments that keep its tensors
  // NHWC: in the graph's order, the segments around it would convert them.
  std::vector<SiluGroup> silu = find_silu_groups(graph);
  const auto keep_silu_out = [](const SiluGroup& g, std::map<NodeId, std::string>& out, std::set<NodeId>& nhwc) {
    out[g.sigmoid] = "a SiLU's Sigmoid, in one pass with its Mul (silu.cc)";
    out[g.mul] = "a SiLU's Mul, in one pass with its Sigmoid (silu.cc)";
    nhwc.insert(g.sigmoid);
    nhwc.insert(g.mul);
  };
  for (bool changed = !silu.empty(); changed;) {
    std::map<NodeId, std::string> out = keep_out;
    std::set<NodeId> nhwc = nhwc_kernels;
    for (const SiluGroup& g : silu) keep_silu_out(g, out, nhwc);
    std::vector<bool> on_nhwc(graph.num_nodes(), false);
    for (const xnnpack::EngineStep& step : xnnpack::plan_engine(graph, out, nhwc).steps)
      for (NodeId n : step.nodes) on_nhwc[n] = step.nhwc;
    const size_t before = silu.size();
    silu.erase(std::remove_if(silu.begin(), silu.end(),
                              [&](const SiluGroup& g) {
                                return graph.value(g.x).type.rank() == 4 && !(on_nhwc[g.sigmoid] && on_nhwc[g.mul]);
                              }),
               silu.end());
    changed = silu.size() != before;
  }
  for (const SiluGroup& g : silu) keep_silu_out(g, keep_out, nhwc_kernels);
  plan_out.silu = silu;
  for (size_t i = 0; i < silu.size(); ++i) {
    plan_out.silu_at[silu[i].mul] = i;
    plan_out.in_silu.insert(silu[i].sigmoid);
  }
  std::vector<PointwiseGroup> groups = find_pointwise_groups(graph);
  const bool forced = pointwise_choice() == PointwiseChoice::kOn;
  if (!forced && !groups.empty()) {
    // Only whole segments: a 1x1 group taken from the middle of a segment
    // splits it, and the values then crossing between the two live in the
    // island's own tensors instead of XNNPACK's reused workspace
    // (EfficientNet-B0, one segment of 223 nodes, ran 1.4 ms slower at 1
    // thread with its 1x1 convs taken out, though each ran faster). A
    // segment made only of the groups' convs, Adds and Relus (ResNet's
    // between two Winograd convs: conv 3, Add, Relu, the next conv 1) goes
    // wholly to the fast GEMM, which leaves one segment fewer.
    std::set<NodeId> members;
    for (const PointwiseGroup& g : groups)
      for (NodeId n : g.nodes()) members.insert(n);
    std::set<NodeId> whole;
    for (const xnnpack::EngineStep& step : xnnpack::plan_engine(graph, keep_out, nhwc_kernels).steps)
      if (step.xnnpack && std::all_of(step.nodes.begin(), step.nodes.end(), [&](NodeId n) { return members.count(n) > 0; }))
        whole.insert(step.nodes.begin(), step.nodes.end());
    groups.erase(std::remove_if(groups.begin(), groups.end(),
                                [&](const PointwiseGroup& g) {
                                  const std::vector<NodeId> nodes = g.nodes();
                                  return !std::all_of(nodes.begin(), nodes.end(), [&](NodeId n) { return whole.count(n) > 0; });
                                }),
                 groups.end());
  }
  xnnpack::EnginePlan plan;
  for (bool changed = true; changed;) {
    std::map<NodeId, std::string> out = keep_out;
    std::set<NodeId> nhwc = nhwc_kernels;
    for (const PointwiseGroup& g : groups) {
      out[g.conv] = "a 1x1 conv; on the fast GEMM (pointwise_conv.cc)";
      if (g.add != kNoNode) out[g.add] = "a residual Add, in its 1x1 conv's epilogue on the fast GEMM";
      if (g.activation != kNoNode) out[g.activation] = "after a residual Add, in its 1x1 conv's epilogue on the fast GEMM";
      for (NodeId n : g.nodes()) nhwc.insert(n);
    }
    plan = xnnpack::plan_engine(graph, out, nhwc);
    std::vector<bool> nhwc_step(graph.num_nodes(), false);
    for (const xnnpack::EngineStep& step : plan.steps)
      if (step.nhwc)
        for (NodeId n : step.nodes) nhwc_step[n] = true;
    // A group not all on NHWC steps goes back to XNNPACK (under the rule)
    // or, its Add and activation not on NHWC steps with its conv, loses
    // them (HETSCHED_POINTWISE=on: every 1x1 conv stays on the fast GEMM).
    changed = false;
    for (auto it = groups.begin(); it != groups.end();) {
      const std::vector<NodeId> nodes = it->nodes();
      const size_t on_nhwc = static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [&](NodeId n) { return nhwc_step[n]; }));
      if (on_nhwc == nodes.size() || (forced && on_nhwc == 0)) {
        ++it;
        continue;
      }
      changed = true;
      if (!forced) {
        it = groups.erase(it);
        continue;
      }
      *it = PointwiseGroup{it->conv, kNoNode, kNoNode, kNoValue, graph.node(it->conv).outputs[0]};
      ++it;
    }
    if (!changed)
      for (const PointwiseGroup& g : groups) nhwc_kernels.insert(g.conv);
  }
  plan_out.pointwise = groups;
  for (size_t i = 0; i < groups.size(); ++i) {
    plan_out.pointwise_at[groups[i].conv] = i;
    if (groups[i].add != kNoNode) plan_out.in_pointwise.insert(groups[i].add);
    if (groups[i].activation != kNoNode) plan_out.in_pointwise.insert(groups[i].activation);
  }
  prefer_fast_for_lone_nodes(graph, plan);
  plan_out.on_fast_kernel.assign(graph.num_nodes(), false);
  for (const xnnpack::EngineStep& step : plan.steps)
    if (!step.xnnpack)
      for (NodeId n : step.nodes)
        plan_out.on_fast_kernel[n] = (!step.nhwc || nhwc_kernels.count(n)) && fast_op_supports(graph, graph.node(n)).is_ok();
  return plan;
}

bool segment_wants_pool(const Graph& graph, const xnnpack::EngineStep& step) {
  double work = 0;
  for (NodeId n : step.nodes) {
    const OpWork w = op_work(graph, n);
    work += w.flops + w.bytes / sizeof(float);  // an elementwise op's work is its traffic
  }
  return work >= parallel_work_threshold();
}

}  // namespace hetsched::cpu::fast
