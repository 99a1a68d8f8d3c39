// SiLU (swish), x * Sigmoid(x), as one pass: EfficientNet, YOLOv5/v8,
// RegNet-Y's SE-free variants and most exports of nn.SiLU write it as a
// Sigmoid and a Mul of its input by it. XNNPACK (Debian's 2022 snapshot)
// has no swish, so in a segment it is two passes over the tensor, the Mul
// reading two; here it is one read and one write.
#pragma once

#include <optional>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

struct SiluGroup {
  NodeId sigmoid = kNoNode;
  NodeId mul = kNoNode;  // Mul(x, Sigmoid(x)) in either order; the group runs at its place
  ValueId x = kNoValue;
  ValueId output = kNoValue;

  std::vector<NodeId> nodes() const { return {sigmoid, mul}; }
};

// Every f32 Sigmoid whose output is read only by a Mul of it and the
// Sigmoid's own input (same static shape, no broadcast) and is no graph
// output.
std::vector<SiluGroup> find_silu_groups(const Graph& graph);

// The SiLU of `x` when it is all that reads `x` (x no graph output): a
// producer of x can then apply it in its epilogue (pointwise_conv.h).
std::optional<SiluGroup> silu_reading(const Graph& graph, ValueId x);

// The op running `group`. It is elementwise, so it runs alike on the
// graph's order and on NHWC data (ctx.nhwc); ctx.node is the group's Mul.
Result<std::unique_ptr<FastOp>> make_silu(const FastOpContext& ctx, const SiluGroup& group);

}  // namespace hetsched::cpu::fast
