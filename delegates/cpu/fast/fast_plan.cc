#include "delegates/cpu/fast/fast_plan.h"

#include "delegates/cpu/fast/fast_op.h"
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
  std::set<NodeId> nhwc_kernels;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    if (depthwise_conv_leaves_xnnpack(graph, graph.node(n)))
      keep_out[n] = "a depthwise conv whose kernel size XNNPACK has no micro-kernel for; on its fast kernel";
    if (winograd_conv_leaves_xnnpack(graph, graph.node(n))) {
      keep_out[n] = "a dense 3x3 stride-1 conv; on the fast Winograd F(4x4,3x3) kernel";
      nhwc_kernels.insert(n);
    }
  }
  xnnpack::EnginePlan plan = xnnpack::plan_engine(graph, keep_out, nhwc_kernels);
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
