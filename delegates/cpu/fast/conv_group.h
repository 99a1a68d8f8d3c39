// A conv on a fast kernel together with what its epilogue takes in from the
// nodes after it, run as one step at the conv's place: 1x1 convs on the
// fast GEMM (pointwise_conv.h) with a residual Add -> Relu/Clip or a SiLU
// (and an Add after that SiLU or their fused activation),
// and, on NHWC data, the Winograd and gathered dense convs (winograd_conv.cc,
// pointwise_conv.cc) and depthwise convs (depthwise_nhwc.h) with a SiLU, the
// depthwise ones with the squeeze of a squeeze-and-excitation block too.
#pragma once

#include <memory>
#include <set>
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
  // Before a 1x1 conv: the Mul of its input by a run-time [1, C, 1, 1]
  // scale (a squeeze-and-excitation block's) that only the conv reads, or
  // kNoNode; with one, the conv reads `scaled` (the Mul's other operand)
  // and scales its weights' rows by `scale` on every run (pointwise_conv.cc).
  NodeId scale_mul = kNoNode;
  ValueId scaled = kNoValue;
  ValueId scale = kNoValue;
  // A depthwise group's: the GlobalAveragePool (or ReduceMean over H and W
  // keeping them) of its output, a squeeze-and-excitation block's squeeze,
  // which the kernel sums from each finished row while it is in L1
  // (depthwise_nhwc.h), or kNoNode; `mean` is its output.
  NodeId squeeze = kNoNode;
  ValueId mean = kNoValue;
  // Which kernel runs the conv: a 1x1 conv's fast GEMM runs in either
  // order, the others' groups on NHWC data only.
  enum class Kernel { kPointwise, kWinograd, kDense, kDepthwise };
  Kernel kernel = Kernel::kPointwise;
  // With `add`: the Add reads the conv's activation instead (its fused
  // one, or the SiLU the group takes): conv -> act -> Add(residual), as
  // YOLO's and CSPNet's bottlenecks and EfficientNetV2's first blocks end.
  // The residual is added after the activation; no activation follows.
  bool add_last = false;

  bool nhwc_only() const { return kernel != Kernel::kPointwise || scale_mul != kNoNode; }

  std::vector<NodeId> nodes() const;
};

// Every group the fast kernels take: the 1x1 convs' (find_pointwise_groups);
// for each of `nhwc_convs` (the Winograd and dense convs the plan keeps out
// of XNNPACK) whose output a SiLU alone reads, the conv with that SiLU; and
// a depthwise conv's for each one whose output is read by a SiLU alone (on
// CPUs with AVX2 and FMA or AVX-512), and on AVX-512 at up to 2 `threads`
// for every other depthwise conv the kernel runs too, with its own clamp
// (HETSCHED_DEPTHWISE=off keeps them all on XNNPACK, =on takes every one on
// AVX2 as well: for benchmarks, since XNNPACK's kernel is as fast there).
std::vector<ConvGroup> find_conv_groups(const Graph& graph, const std::set<NodeId>& nhwc_convs, int threads = 1);

// The one node reading `v`, when `v` is no graph output; else kNoNode:
// what a group takes in after a node must be read by nothing else.
NodeId sole_reader(const Graph& graph, ValueId v);

// What every fast conv kernel asks of its node (GemmConv, the NHWC
// depthwise conv): a Conv of a static rank-4 f32 X with constant f32
// weights and bias, a static output and a fused activation it knows. Its
// parameters, or kUnsupported with the reason.
Result<xnnpack::ConvParams> read_fast_conv(const Graph& graph, const Node& node);

// A conv's sizes in the graph's (NCHW) terms, whatever order the kernel
// reads: what the fast conv kernels' geometries start from.
struct ConvShape {
  int64_t batch = 0, cin = 0, cout = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};
// Of `node` (read_fast_conv() passed, `p` its result).
ConvShape conv_shape(const Graph& graph, const Node& node, const xnnpack::ConvParams& p);

// The op running `group` (ctx.node is its conv; ctx.nhwc for NHWC data).
Result<std::unique_ptr<FastOp>> make_conv_group(const FastOpContext& ctx, const ConvGroup& group);

}  // namespace hetsched::cpu::fast
