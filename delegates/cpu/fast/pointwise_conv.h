// 1x1 convs (group 1, no pads, any stride) on the fast GEMM (gemm.h), with
// the bias, the fused activation and a residual Add -> Relu/Clip or a SiLU
// after them in the GEMM's epilogue (pointwise_conv.cc).
//
// A ResNet bottleneck ends conv1x1 -> BatchNorm (folded into the conv) ->
// Add(identity) -> Relu; an inverted residual (MobileNetV2/V3,
// EfficientNet) ends conv1x1 -> BatchNorm -> Add. A group is the conv and,
// when the graph allows, that Add and the Relu or Clip after it, run as one
// pass over the output.
#pragma once

#include <vector>

#include "delegates/cpu/fast/conv_group.h"
#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

// A group for every Conv pointwise_conv_leaves_xnnpack() takes, with the Add
// when the conv has no activation of its own, its output is read by that
// Add alone, the other operand has the output's type and exists before the
// conv runs (the group runs at the conv's place), and with the Relu or
// Clip when it is the Add's only reader; under the rule, only where
// pointwise_residual_pays(). Without an Add, with the SiLU that alone reads
// the conv's output (EfficientNet's expand convs).
// `threads`: the island's (pointwise_rule.h).
std::vector<ConvGroup> find_pointwise_groups(const Graph& graph, int threads = 1);

// Takes into `g` (a 1x1 or dense conv's group whose output is the conv's
// activation: its fused one, or the SiLU the group took) the residual Add
// that alone reads that output, when the other operand has its type and
// exists before the conv runs: add_last, the residual added after the
// activation. Nothing when there is no such Add.
void add_after_activation(const Graph& graph, ConvGroup& g);

// The op running `group`, on the graph's order or (ctx.nhwc) on NHWC data;
// ctx.node is the group's conv.
Result<std::unique_ptr<FastOp>> make_pointwise(const FastOpContext& ctx, const ConvGroup& group);

// The same for a dense KxK conv's group (dense_conv_leaves_xnnpack()).
Result<std::unique_ptr<FastOp>> make_dense_conv_group(const FastOpContext& ctx, const ConvGroup& group);

}  // namespace hetsched::cpu::fast
