// A squeeze-and-excitation block's excitation as one op: the gate
// g = act2(fc2(act1(fc1(mean)))) from the squeeze's per-channel means (fc1
// and fc2 1x1 convs on one pixel, C -> S -> C; act1 the fc1's fused
// activation or a SiLU after it, act2 fc2's fused Sigmoid or HardSigmoid),
// then the map times the gate, channel by channel. EfficientNet,
// EfficientNetV2, MobileNetV3, RegNetY and MnasNet-A write it so.
//
// In XNNPACK segments that was fc1 alone, then fc2 and the Mul: two
// dispatches for a few thousand flops and a pass over the map on one
// thread, since the segment's work is below the pool's threshold. At 2
// threads the map's two halves sit in the two cores' caches (the depthwise
// conv before wrote them), so the one thread pulled half of it across and
// the projection after pulled it back: EfficientNetV2-S's 14x14 blocks
// took 0.041 ms at 1 thread and 0.070 at 2. Here the gate is computed on
// the calling thread (m = images on the fast GEMM) and the map scaled in
// bands of pixels split as the depthwise conv's rows are.
//
// Where the projection after it folds the Mul into its weights
// (pointwise_conv.h's scale_before: maps of 8x its output channels or
// more) the conv group takes the Mul and no group forms here.
#pragma once

#include <memory>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

struct SeGroup {
  NodeId fc1 = kNoNode;
  NodeId silu_sigmoid = kNoNode;  // fc1's SiLU (silu.h), or kNoNode
  NodeId silu_mul = kNoNode;
  NodeId fc2 = kNoNode;
  NodeId mul = kNoNode;  // Mul(map, gate); the group runs at its place
  ValueId mean = kNoValue;  // fc1's input, [N, C, 1, 1]
  ValueId map = kNoValue;   // [N, C, H, W]
  ValueId output = kNoValue;

  std::vector<NodeId> nodes() const;
};

// Every Mul of a static rank-4 f32 map by the [N, C, 1, 1] output of a 1x1
// conv (fc2: constant weights and bias, a fused activation or none) that
// only the Mul reads, whose input is a 1x1 conv's (fc1's, on a run-time
// [N, C, 1, 1] value) output read by fc2 alone, or that output's SiLU
// (fc1 then has no fused activation of its own).
std::vector<SeGroup> find_se_groups(const Graph& graph);

// The op running `group` (ctx.node is its Mul), on NHWC data (ctx.nhwc)
// or in the graph's order.
Result<std::unique_ptr<FastOp>> make_se_excite(const FastOpContext& ctx, const SeGroup& group);

}  // namespace hetsched::cpu::fast
