#include "delegates/cpu/fast/fast_plan.h"

#include <algorithm>

#include "delegates/cpu/fast/dense_conv_rule.h"
#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/pointwise_rule.h"
#include "graph/op_work.h"

namespace hetsched::cpu::fast {

namespace {

// A Resize making an island output from NHWC data (a segmentation
// network's class maps resized to the input's size: DeepLabV3, LR-ASPP,
// FCN) runs as an NHWC step that writes its output in the graph's order
// (resize.cc): alone in a segment, XNNPACK resized NHWC and then converted
// the large output back (DeepLabV3 MobileNetV3-Large: 21 maps to 224x224,
// 1.2-1.4 ms against ONNX Runtime's 0.6). The Resizes it takes go into
// `nchw_out`.
bool lone_resize_to_output(const Graph& graph, xnnpack::EngineStep& step, std::set<NodeId>& nchw_out, int threads) {
  const NodeId n = step.nodes[0];
  const Node& node = graph.node(n);
  if (node.op != "Resize" || step.inputs.size() != 1 || step.inputs[0] != node.inputs[0] ||
      !step.resident_nhwc.count(node.inputs[0]) || step.resident_nhwc.count(node.outputs[0]) ||
      !graph.is_output(node.outputs[0]) || graph.consumers(node.outputs[0]).size() != 0 ||
      !fast_op_supports(graph, node, threads).is_ok())
    return false;
  step = xnnpack::EngineStep{false, true, step.nodes, {}, {}, {}, {}, true};
  nchw_out.insert(n);
  return true;
}

// A segment of one node that has a fast kernel runs on that kernel
// instead: alone, the segment pays a staging copy and XNNPACK's dispatch
// for one op (attention's Softmax between two batched MatMuls: 12 us in a
// segment, 6 on its fast kernel). Only segments in the graph's order, so
// that no value kept NHWC for a neighbour changes hands (lone_resize_to_output
// aside).
void prefer_fast_for_lone_nodes(const Graph& graph, xnnpack::EnginePlan& plan, std::set<NodeId>& nchw_out,
                                int threads) {
  for (xnnpack::EngineStep& step : plan.steps) {
    if (!step.xnnpack || step.nodes.size() != 1) continue;
    if (lone_resize_to_output(graph, step, nchw_out, threads)) {
      plan.portable.push_back({step.nodes[0], "a Resize to the island's output; its NHWC kernel writes the graph's order"});
      continue;
    }
    bool graph_order = step.resident_nhwc.empty();
    for (const auto& [v, layout] : step.layouts) graph_order = graph_order && layout == TensorLayout::kNchw;
    const NodeId n = step.nodes[0];
    // A lone Resize converts both its edges when nothing is kept NHWC
    // around it (XNNPACK resizes NHWC): the fast kernel needs neither.
    if (graph.node(n).op == "Resize" && step.resident_nhwc.empty()) graph_order = true;
    if (!graph_order || !fast_op_beats_lone_segment(graph, graph.node(n), threads)) continue;
    step = xnnpack::EngineStep{false, false, step.nodes, {}, {}, {}, {}};
    plan.portable.push_back({n, "alone in its segment; its fast kernel costs less"});
  }
}

// `g` (ConvGroup::add_last) without its Add: the conv and its activation.
ConvGroup without_add(const Graph& graph, ConvGroup g) {
  g.output = g.silu_mul != kNoNode ? graph.node(g.silu_mul).outputs[0] : graph.node(g.conv).outputs[0];
  g.add = kNoNode;
  g.residual = kNoValue;
  g.add_last = false;
  return g;
}

// Keeps `groups`' nodes out of XNNPACK, each with its reason, and makes
// them NHWC candidates.
void keep_out_groups(const std::vector<ConvGroup>& groups, std::map<NodeId, std::string>& out, std::set<NodeId>& nhwc) {
  for (const ConvGroup& g : groups) {
    if (g.kernel == ConvGroup::Kernel::kDepthwise)
      out[g.conv] = "a depthwise conv; on its NHWC kernel (depthwise_nhwc.cc)";
    else if (g.kernel == ConvGroup::Kernel::kPointwise)
      out[g.conv] = "a 1x1 conv; on the fast GEMM (pointwise_conv.cc)";
    if (g.add != kNoNode)
      out[g.add] = g.add_last ? "a residual Add after its conv's activation, in the conv's last pass on the fast GEMM"
                              : "a residual Add, in its 1x1 conv's epilogue on the fast GEMM";
    if (g.activation != kNoNode) out[g.activation] = "after a residual Add, in its 1x1 conv's epilogue on the fast GEMM";
    if (g.scale_mul != kNoNode)
      out[g.scale_mul] = "a squeeze-and-excitation Mul, folded into its 1x1 conv's weights on every run";
    if (g.silu_sigmoid != kNoNode) {
      out[g.silu_sigmoid] = "a SiLU's Sigmoid, in its conv's epilogue";
      out[g.silu_mul] = "a SiLU's Mul, in its conv's epilogue";
    }
    if (g.squeeze != kNoNode) out[g.squeeze] = "a squeeze's mean, summed from its depthwise conv's rows";
    for (NodeId n : g.nodes()) nhwc.insert(n);
  }
}

}  // namespace

xnnpack::EnginePlan plan_with_fast_kernels(const Graph& graph, FastPlan& plan_out, int threads) {
  plan_out.linear = find_linear_groups(graph);
  for (size_t i = 0; i < plan_out.linear.size(); ++i) {
    plan_out.linear_at[plan_out.linear[i].matmul] = i;
    for (NodeId n : plan_out.linear[i].nodes())
      if (n != plan_out.linear[i].matmul) plan_out.in_linear.insert(n);
  }
  std::map<NodeId, std::string> keep_out = linear_keep_out(plan_out.linear);
  // Attention's layout ops, read and written through by its MatMuls.
  std::set<NodeId> linear_nodes;
  for (const auto& [n, reason] : keep_out) linear_nodes.insert(n);
  AttentionPlan attention = plan_attention_strides(graph, linear_nodes);
  plan_out.elided = attention.elided;
  for (NodeId n : attention.elided) keep_out[n] = "a layout op an attention MatMul reads through (attention_plan.h)";
  plan_out.strided = std::move(attention.matmuls);
  for (size_t i = 0; i < plan_out.strided.size(); ++i) {
    plan_out.strided_at[plan_out.strided[i].matmul] = i;
    for (NodeId n : plan_out.strided[i].out_chain) {
      plan_out.in_strided.insert(n);
      keep_out[n] = "a layout op its attention MatMul writes through (attention_plan.h)";
    }
    if (const NodeId add = plan_out.strided[i].mask_add; add != kNoNode) {
      plan_out.in_strided.insert(add);
      keep_out[add] = "a mask its attention MatMul adds in its epilogue (attention_plan.h)";
    }
  }
  std::set<NodeId> nhwc_kernels, dense;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    // Elementwise on one input, its fast kernel runs on either order: on
    // NHWC data between segments, the values around it are not converted
    // (MaxViT's MBConv: expand conv, GELU, depthwise conv, GELU at 112x112
    // and 256 channels).
    const Node& node = graph.node(n);
    if ((node.op == "Gelu" || node.op == "Erf") && node.outputs.size() == 1 &&
        graph.value(node.outputs[0]).type.rank() == 4 && fast_op_supports(graph, node, threads).is_ok())
      nhwc_kernels.insert(n);
    if (depthwise_conv_leaves_xnnpack(graph, graph.node(n)))
      keep_out[n] = "a depthwise conv whose kernel size XNNPACK has no micro-kernel for; on its fast kernel";
    if (winograd_conv_leaves_xnnpack(graph, graph.node(n), threads)) {
      keep_out[n] = "a dense 3x3 stride-1 conv; on the fast Winograd kernel";
      nhwc_kernels.insert(n);
    } else if (dense_conv_leaves_xnnpack(graph, graph.node(n), threads)) {
      dense.insert(n);
    }
  }
  // A dense conv leaves XNNPACK only where it then runs as an NHWC step:
  // in the graph's order the conversions around it cost more than the
  // GEMM saves (SqueezeNet's expand 3x3s, whose Concat partners stay in
  // graph order, ran 22% slower taken out). HETSCHED_DENSE_CONV=on keeps
  // every one (tests of the graph-order path).
  const bool dense_forced = dense_conv_choice() == DenseConvChoice::kOn;
  // Those that can read the island's NCHW input and still write NHWC.
  std::set<NodeId> stems;
  for (NodeId n : dense)
    if (dense_conv_reads_windows(graph, graph.node(n), threads)) stems.insert(n);
  const char* const kDenseReason =
      "a dense conv XNNPACK runs slower at this shape; on the fast GEMM";
  // With the conv groups as they may come (the depthwise ones keep
  // ConvNeXt's stages NHWC, between which its 2x2 downsampling convs sit).
  std::set<NodeId> maybe_nhwc = nhwc_kernels;
  maybe_nhwc.insert(dense.begin(), dense.end());
  // Without the Adds after an activation, which the loop below may strip
  // (an island output such an Add writes keeps the values before it in the
  // graph's order; the dense convs are judged as they would run without).
  std::vector<ConvGroup> maybe_groups = find_conv_groups(graph, maybe_nhwc, threads);
  for (ConvGroup& g : maybe_groups)
    if (g.add_last) g = without_add(graph, g);
  for (bool changed = !dense_forced; changed && !dense.empty();) {
    std::map<NodeId, std::string> out = keep_out;
    std::set<NodeId> nhwc = nhwc_kernels;
    keep_out_groups(maybe_groups, out, nhwc);
    for (NodeId n : dense) {
      out[n] = kDenseReason;
      nhwc.insert(n);
    }
    changed = false;
    for (const xnnpack::EngineStep& step : xnnpack::plan_engine(graph, out, nhwc, stems).steps)
      if (!step.xnnpack && !step.nhwc)
        for (NodeId n : step.nodes) changed = dense.erase(n) > 0 || changed;
  }
  for (NodeId n : dense) {
    keep_out[n] = kDenseReason;
    nhwc_kernels.insert(n);
  }
  // The 1x1 convs the fast GEMM runs faster, with what they fuse, and the
  // SiLUs no 1x1 conv takes into its epilogue, which leave XNNPACK for their
  // one-pass kernel: all of them only where they then run as NHWC steps,
  // between segments that keep their tensors NHWC (in the graph's order the
  // segments around them would convert those), except a SiLU of rank other
  // than 4 (no layout at stake) and, under HETSCHED_POINTWISE=on, the 1x1
  // convs themselves. Taking them out of the middle of a segment costs
  // nothing since the island's tensors share one arena (island_arena.h):
  // under a rule that took only whole segments of them, EfficientNet-B0,
  // DenseNet-121 and SqueezeNet 1.1 ran 12-14% slower at 1 thread.
  std::vector<ConvGroup> groups = find_conv_groups(graph, nhwc_kernels, threads);
  const bool forced = pointwise_choice() == PointwiseChoice::kOn;
  std::set<NodeId> grouped;
  for (const ConvGroup& g : groups)
    for (NodeId n : g.nodes()) grouped.insert(n);
  // Squeeze-and-excitation gates whose nodes no conv group took (a
  // projection that folds the Mul, HETSCHED_POINTWISE=on's fc1 and fc2).
  std::vector<SeGroup> se;
  for (const SeGroup& g : find_se_groups(graph)) {
    const std::vector<NodeId> nodes = g.nodes();
    if (std::none_of(nodes.begin(), nodes.end(), [&](NodeId n) { return grouped.count(n) > 0; })) {
      se.push_back(g);
      grouped.insert(nodes.begin(), nodes.end());
    }
  }
  std::vector<SiluGroup> silu;
  for (const SiluGroup& g : find_silu_groups(graph))
    if (!grouped.count(g.sigmoid)) silu.push_back(g);
  // A BatchNorm right after a conv stays in the conv's segment, which folds
  // it into the conv's weights (xnnpack/lowering.cc).
  std::vector<AffineGroup> affine;
  for (const AffineGroup& g : find_affine_groups(graph)) {
    const NodeId producer = graph.value(g.x).producer;
    if (producer == kNoNode || graph.node(producer).op != "Conv") affine.push_back(g);
  }
  xnnpack::EnginePlan plan;
  for (bool changed = true; changed;) {
    std::map<NodeId, std::string> out = keep_out;
    std::set<NodeId> nhwc = nhwc_kernels;
    keep_out_groups(groups, out, nhwc);
    for (const SeGroup& g : se) {
      for (NodeId n : g.nodes()) {
        out[n] = "in a squeeze-and-excitation gate, computed on the fast GEMM at its Mul (se_excite.cc)";
        nhwc.insert(n);
      }
      out[g.mul] = "a squeeze-and-excitation Mul, one pass with its gate (se_excite.cc)";
    }
    for (const SiluGroup& g : silu) {
      out[g.sigmoid] = "a SiLU's Sigmoid, in one pass with its Mul (silu.cc)";
      out[g.mul] = "a SiLU's Mul, in one pass with its Sigmoid (silu.cc)";
      nhwc.insert(g.sigmoid);
      nhwc.insert(g.mul);
    }
    for (const AffineGroup& g : affine) {
      out[g.norm] = "a BatchNormalization, one NHWC pass with its clamp (channel_affine.cc)";
      nhwc.insert(g.norm);
      if (g.concat != kNoNode) {
        out[g.concat] = "a Concat only a BatchNormalization reads, in its one NHWC pass (channel_affine.cc)";
        nhwc.insert(g.concat);
      }
      if (g.clamp != kNoNode) {
        out[g.clamp] = "after a BatchNormalization, in its one NHWC pass (channel_affine.cc)";
        nhwc.insert(g.clamp);
      }
    }
    plan = xnnpack::plan_engine(graph, out, nhwc, stems);
    std::vector<bool> nhwc_step(graph.num_nodes(), false);
    for (const xnnpack::EngineStep& step : plan.steps)
      if (step.nhwc)
        for (NodeId n : step.nodes) nhwc_step[n] = true;
    // An Add after the activation (ConvGroup::add_last) not on an NHWC step
    // leaves its group, which keeps its conv and SiLU; the plan is made
    // again before any group is judged: an island output such an Add
    // writes keeps the values before it in the graph's order, which would
    // fail the groups there too.
    changed = false;
    for (ConvGroup& g : groups)
      if (g.add_last && !nhwc_step[g.add]) {
        g = without_add(graph, g);
        changed = true;
      }
    if (changed) continue;
    // A group not all on NHWC steps goes back to XNNPACK (under the rule,
    // and an NHWC-only one always; a Winograd or dense conv stays on its
    // kernel alone) or, its Add, activation and SiLU not on
    // NHWC steps with its conv, loses them (HETSCHED_POINTWISE=on: every
    // 1x1 conv stays on the fast GEMM); a SiLU it loses is a candidate of
    // its own.
    for (auto it = groups.begin(); it != groups.end();) {
      // A scale Mul not on an NHWC step stays out of its group, whose conv
      // then reads the Mul's output as before.
      if (it->scale_mul != kNoNode && !nhwc_step[it->scale_mul]) {
        it->scale_mul = kNoNode;
        it->scaled = it->scale = kNoValue;
        changed = true;
      }
      // So does a squeeze, which then runs where the plan puts it.
      if (it->squeeze != kNoNode && !nhwc_step[it->squeeze]) {
        it->squeeze = kNoNode;
        it->mean = kNoValue;
        changed = true;
      }
      const std::vector<NodeId> nodes = it->nodes();
      const size_t on_nhwc = static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [&](NodeId n) { return nhwc_step[n]; }));
      if (on_nhwc == nodes.size() || (forced && !it->nhwc_only() && on_nhwc == 0)) {
        ++it;
        continue;
      }
      changed = true;
      if (it->silu_mul != kNoNode)
        silu.push_back(SiluGroup{it->silu_sigmoid, it->silu_mul, graph.node(it->conv).outputs[0], it->output});
      if (!forced || it->nhwc_only()) {
        it = groups.erase(it);
        continue;
      }
      *it = ConvGroup{it->conv, kNoNode, kNoNode, kNoValue, graph.node(it->conv).outputs[0]};
      ++it;
    }
    // A gate goes back to XNNPACK where its Mul is not on an NHWC step, or
    // where the map comes from a segment: that segment's pooled operators
    // scale the map where its threads left it, and RegNetY-400MF (the SE
    // after a grouped conv on XNNPACK) ran 4% slower at 2 threads with the
    // gate as a step of its own. fc1's SiLU, if any, is then a candidate
    // of its own.
    for (auto it = se.begin(); it != se.end();) {
      const NodeId producer = graph.value(it->map).producer;
      if (nhwc_step[it->mul] && producer != kNoNode && nhwc_step[producer]) {
        ++it;
        continue;
      }
      if (it->silu_mul != kNoNode)
        silu.push_back(SiluGroup{it->silu_sigmoid, it->silu_mul, graph.node(it->fc1).outputs[0],
                                 graph.node(it->silu_mul).outputs[0]});
      it = se.erase(it);
      changed = true;
    }
    const size_t before = silu.size();
    silu.erase(std::remove_if(silu.begin(), silu.end(),
                              [&](const SiluGroup& g) {
                                return graph.value(g.x).type.rank() == 4 && !(nhwc_step[g.sigmoid] && nhwc_step[g.mul]);
                              }),
               silu.end());
    changed = changed || silu.size() != before;
    // A group whose Concat is not on an NHWC step keeps its BatchNorm and
    // clamp without it; one whose BatchNorm or clamp is not goes back.
    for (AffineGroup& g : affine)
      if (g.concat != kNoNode && !nhwc_step[g.concat]) {
        g.concat = kNoNode;
        g.pieces.clear();
        changed = true;
      }
    const size_t affine_before = affine.size();
    affine.erase(std::remove_if(affine.begin(), affine.end(),
                                [&](const AffineGroup& g) {
                                  return !nhwc_step[g.norm] || (g.clamp != kNoNode && !nhwc_step[g.clamp]);
                                }),
                 affine.end());
    changed = changed || affine.size() != affine_before;
    if (!changed)
      for (const ConvGroup& g : groups) nhwc_kernels.insert(g.conv);
  }
  plan_out.silu = silu;
  for (size_t i = 0; i < silu.size(); ++i) {
    plan_out.silu_at[silu[i].mul] = i;
    plan_out.in_silu.insert(silu[i].sigmoid);
  }
  plan_out.se = se;
  for (size_t i = 0; i < se.size(); ++i) {
    plan_out.se_at[se[i].mul] = i;
    for (NodeId n : se[i].nodes())
      if (n != se[i].mul) plan_out.in_se.insert(n);
  }
  plan_out.affine = affine;
  for (size_t i = 0; i < affine.size(); ++i) {
    plan_out.affine_at[affine[i].lead()] = i;
    if (affine[i].clamp != kNoNode) plan_out.in_affine.insert(affine[i].norm);
    if (affine[i].concat != kNoNode) plan_out.in_affine.insert(affine[i].concat);
  }
  plan_out.conv_groups = groups;
  for (size_t i = 0; i < groups.size(); ++i) {
    plan_out.conv_group_at[groups[i].conv] = i;
    for (NodeId n : groups[i].nodes())
      if (n != groups[i].conv) plan_out.in_conv_group.insert(n);
  }
  std::set<NodeId> nchw_out;
  prefer_fast_for_lone_nodes(graph, plan, nchw_out, threads);
  nhwc_kernels.insert(nchw_out.begin(), nchw_out.end());
  plan_out.on_fast_kernel.assign(graph.num_nodes(), false);
  for (const xnnpack::EngineStep& step : plan.steps)
    if (!step.xnnpack)
      for (NodeId n : step.nodes)
        plan_out.on_fast_kernel[n] = (!step.nhwc || nhwc_kernels.count(n)) && fast_op_supports(graph, graph.node(n), threads).is_ok();
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
