#include "delegates/cpu/fast/conv_group.h"

#include <optional>

#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/depthwise_nhwc.h"
#include "delegates/cpu/fast/pointwise_conv.h"
#include "delegates/cpu/fast/rule_choice.h"
#include "delegates/cpu/fast/silu.h"
#include "delegates/cpu/fast/vector_math.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

std::vector<NodeId> ConvGroup::nodes() const {
  std::vector<NodeId> n;
  if (scale_mul != kNoNode) n.push_back(scale_mul);
  n.push_back(conv);
  if (add != kNoNode && !add_last) n.push_back(add);
  if (activation != kNoNode) n.push_back(activation);
  if (silu_sigmoid != kNoNode) n.push_back(silu_sigmoid);
  if (silu_mul != kNoNode) n.push_back(silu_mul);
  if (add != kNoNode && add_last) n.push_back(add);
  if (squeeze != kNoNode) n.push_back(squeeze);
  return n;
}

NodeId sole_reader(const Graph& graph, ValueId v) {
  if (graph.is_output(v)) return kNoNode;
  const std::vector<NodeId> readers = graph.consumers(v);
  return readers.size() == 1 ? readers[0] : kNoNode;
}

Result<xnnpack::ConvParams> read_fast_conv(const Graph& graph, const Node& node) {
  if (node.op != "Conv") return unsupported("not a Conv");
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return unsupported("not X, W and one output");
  const Value& x = graph.value(node.inputs[0]);
  const Value& w = graph.value(node.inputs[1]);
  const Value& y = graph.value(node.outputs[0]);
  if (x.is_constant()) return unsupported("the input is a constant");
  if (!x.type_known || !x.type.is_static() || x.type.dtype != DType::kFloat32 || x.type.rank() != 4)
    return unsupported("X is not a static rank-4 f32 tensor");
  if (!y.type_known || !y.type.is_static()) return unsupported("the output has no static shape");
  if (!w.is_constant() || w.constant->dtype() != DType::kFloat32) return unsupported("W is not an f32 constant");
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue && !graph.value(node.inputs[2]).is_constant())
    return unsupported("the bias is computed at run time");
  HS_RETURN_IF_ERROR(read_fused_activation(node.attrs).status());
  return xnnpack::read_conv(graph, node);
}

namespace {

// The SiLU that alone reads `conv`'s output, when the conv has no
// activation of its own.
std::optional<SiluGroup> silu_after(const Graph& graph, const Node& conv) {
  const Result<FusedActivation> own = read_fused_activation(conv.attrs);
  if (!own.is_ok() || own->kind != FusedActivation::Kind::kNone) return std::nullopt;
  return silu_reading(graph, conv.outputs[0]);
}

ConvGroup with_silu(NodeId conv, const SiluGroup& silu, ConvGroup::Kernel kernel) {
  ConvGroup g;
  g.conv = conv;
  g.silu_sigmoid = silu.sigmoid;
  g.silu_mul = silu.mul;
  g.output = silu.output;
  g.kernel = kernel;
  return g;
}

}  // namespace

ConvShape conv_shape(const Graph& graph, const Node& node, const xnnpack::ConvParams& p) {
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  ConvShape s;
  s.batch = x[0];
  s.cin = x[1];
  s.in_h = x[2];
  s.in_w = x[3];
  s.cout = y[1];
  s.out_h = y[2];
  s.out_w = y[3];
  s.kernel_h = p.window.kernel_h;
  s.kernel_w = p.window.kernel_w;
  s.stride_h = p.window.stride_h;
  s.stride_w = p.window.stride_w;
  s.dilation_h = p.window.dilation_h;
  s.dilation_w = p.window.dilation_w;
  s.pad_top = p.window.pad_top;
  s.pad_left = p.window.pad_left;
  return s;
}

namespace {

// The most threads at which a depthwise conv with a clamp (or nothing)
// after it leaves XNNPACK: measured at 1, 2 (gains) and 16 (losses); 4 and
// 8 were not measured.
constexpr int kMaxClampThreads = 2;

// The squeeze of a squeeze-and-excitation block reading a depthwise
// group's output: a GlobalAveragePool, or a ReduceMean over H and W keeping
// them, of that output (f32, static), or kNoNode.
NodeId squeeze_of(const Graph& graph, ValueId output) {
  for (NodeId r : graph.consumers(output)) {
    const Node& n = graph.node(r);
    if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] != output) continue;
    const bool global = n.op == "GlobalAveragePool" && n.inputs.size() == 1;
    const Result<bool> mean = n.op == "ReduceMean" ? xnnpack::read_spatial_mean(graph, n) : Result<bool>(false);
    if (!global && !(mean.is_ok() && *mean)) continue;
    const Value& y = graph.value(n.outputs[0]);
    if (y.type_known && y.type.is_static() && y.type.dtype == DType::kFloat32) return r;
  }
  return kNoNode;
}

// `g` (a depthwise group) with the squeeze reading its output, if any.
ConvGroup with_squeeze(const Graph& graph, ConvGroup g) {
  g.squeeze = squeeze_of(graph, g.output);
  if (g.squeeze != kNoNode) g.mean = graph.node(g.squeeze).outputs[0];
  return g;
}

}  // namespace

std::vector<ConvGroup> find_conv_groups(const Graph& graph, const std::set<NodeId>& nhwc_convs, int threads) {
  std::vector<ConvGroup> groups = find_pointwise_groups(graph, threads);
  for (NodeId id : nhwc_convs) {
    const ConvGroup::Kernel kernel = winograd_conv_leaves_xnnpack(graph, graph.node(id), threads)
                                         ? ConvGroup::Kernel::kWinograd
                                         : ConvGroup::Kernel::kDense;
    if (const std::optional<SiluGroup> silu = silu_after(graph, graph.node(id))) {
      // With the residual Add after the SiLU, where there is one.
      ConvGroup g = with_silu(id, *silu, kernel);
      add_after_activation(graph, g);
      groups.push_back(g);
      continue;
    }
    // A fused activation and the residual Add after it.
    const Result<FusedActivation> own = read_fused_activation(graph.node(id).attrs);
    if (!own.is_ok() || own->kind == FusedActivation::Kind::kNone) continue;
    ConvGroup g;
    g.conv = id;
    g.output = graph.node(id).outputs[0];
    g.kernel = kernel;
    add_after_activation(graph, g);
    if (g.add != kNoNode) groups.push_back(g);
  }
  const RuleChoice depthwise = rule_choice("HETSCHED_DEPTHWISE");
  if (depthwise == RuleChoice::kOff || !cpu_has_avx2_fma()) return groups;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& conv = graph.node(id);
    if (!depthwise_nhwc_supported(graph, conv).is_ok()) continue;
    const std::optional<SiluGroup> silu = silu_after(graph, conv);
    // With a clamp or nothing after it, only on AVX-512 (where the kernel
    // keeps its inputs in registers, pin_lanes) and up to kMaxClampThreads:
    // with AVX2 alone, or before its tiles of 8 columns, XNNPACK's own
    // kernel measured as fast or faster (MobileNetV3, RegNetY, ShuffleNetV2,
    // ConvNeXt 2-10% slower with every depthwise conv here; only MnasNet
    // gained). With the tiles, at 1 thread on the 2-core Xeon: MnasNet
    // 5.87 -> 5.31 ms, MobileNetV3-Small 1.76 -> 1.62, MobileNetV2 5.27 ->
    // 5.20. At 16 threads on the 16-core Xeon the models lost 10-25%
    // (MobileNetV3-Small 0.94 -> 1.07 ms, ShuffleNetV2 1.43 -> 1.61): each
    // conv taken out of a segment is a step of its own, whose pool wakes
    // 15 threads, where XNNPACK's segment runs on with its threads spinning.
    const bool clamp_pays = cpu_has_avx512f() && threads <= kMaxClampThreads;
    // A kernel size XNNPACK has no micro-kernel for (ConvNeXt's 7x7) would
    // otherwise run on the graph-order kernel (depthwise_conv.cc), a step
    // of its own too: at any thread count.
    const bool xnnpack_lacks = depthwise_conv_leaves_xnnpack(graph, conv);
    // A grouped conv of 2 or 4 channels a group: XNNPACK's runs a GEMM
    // per group, of depth 9 x 4 for ResNeXt-50's first stage (1.9-2.0 ms
    // at 1 thread on the 2-core Xeon, 7 GFMA/s), at any thread count.
    const bool grouped = nhwc_group_width(graph, conv) > 1;
    if (!silu && (depthwise == RuleChoice::kOn || clamp_pays || xnnpack_lacks || grouped)) {  // with its own clamp, if any
      ConvGroup g;
      g.conv = id;
      g.output = conv.outputs[0];
      g.kernel = ConvGroup::Kernel::kDepthwise;
      groups.push_back(with_squeeze(graph, g));
      continue;
    }
    if (silu) groups.push_back(with_squeeze(graph, with_silu(id, *silu, ConvGroup::Kernel::kDepthwise)));
  }
  return groups;
}

Result<std::unique_ptr<FastOp>> make_conv_group(const FastOpContext& ctx, const ConvGroup& group) {
  if (group.nhwc_only() && !ctx.nhwc) return invalid_argument("this conv group runs on NHWC data only");
  const ActivationPass silu = group.silu_mul != kNoNode ? ActivationPass::silu() : ActivationPass();
  switch (group.kernel) {
    case ConvGroup::Kernel::kPointwise: return make_pointwise(ctx, group);
    case ConvGroup::Kernel::kDense: return make_dense_conv_group(ctx, group);
    case ConvGroup::Kernel::kWinograd:
      return make_winograd(ctx, group.output, silu, group.add_last ? &ctx.tensor_of(group.residual) : nullptr);
    case ConvGroup::Kernel::kDepthwise: return make_depthwise_nhwc(ctx, group.output, silu, group.mean);
  }
  return invalid_argument("unknown conv group kernel");
}

}  // namespace hetsched::cpu::fast
