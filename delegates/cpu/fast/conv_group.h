// A conv on a fast kernel together with what its epilogue takes in from the
// nodes after it, run as one step at the conv's place: 1x1 convs on the
// fast GEMM (pointwise_conv.h) with a residual Add -> Relu/Clip or a SiLU,
// and depthwise convs on NHWC data (depthwise_nhwc.h) with a SiLU.
#pragma once

#include <memory>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/xnnpack/op_params.h"

namespace hetsched::cpu::fast {

struct ConvGroup {
  NodeId conv = kNoNode;
  NodeId add = kNoNode;         // Add(conv's output, residual), or kNoNode
  NodeId activation = kNoNode;  // Relu or Clip of the Add's output, or kNoNode
  ValueId residual = kNoValue;
  ValueId output = kNoValue;  // the last node's output
  // Without an Add: the SiLU (Sigmoid and Mul, silu.h) of the conv's
  // output, or kNoNode.
  NodeId silu_sigmoid = kNoNode;
  NodeId silu_mul = kNoNode;
  // A depthwise conv (depthwise_nhwc.h), which runs on NHWC data only;
  // else a 1x1 conv on the fast GEMM, in either order.
  bool depthwise = false;

  std::vector<NodeId> nodes() const;
};

// Every group the fast kernels take: the 1x1 convs' (find_pointwise_groups)
// and a depthwise conv's for each one whose output is read by a SiLU alone
// (on CPUs with AVX2 and FMA or AVX-512; HETSCHED_DEPTHWISE=off keeps them
// all on XNNPACK).
std::vector<ConvGroup> find_conv_groups(const Graph& graph);

// What every fast conv kernel asks of its node (GemmConv, the NHWC
// depthwise conv): a Conv of a static rank-4 f32 X with constant f32
// weights and bias, a static output and a fused activation it knows. Its
// parameters, or kUnsupported with the reason.
Result<xnnpack::ConvParams> read_fast_conv(const Graph& graph, const Node& node);

// The op running `group` (ctx.node is its conv; ctx.nhwc for NHWC data).
Result<std::unique_ptr<FastOp>> make_conv_group(const FastOpContext& ctx, const ConvGroup& group);

}  // namespace hetsched::cpu::fast
