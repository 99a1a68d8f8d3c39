// What the dispatch plan folds into the dispatch of an operator: the
// operators that follow it in execution order and touch only its output, as
// the Vulkan delegate's lowering folds BatchNormalization, bias Adds and
// activations into its convs and chains elementwise ops. The producer is a
// convolution (conv2d, depthwise_conv2d, or a matmul by constant weights run
// as a 1x1 conv: the shared conv kernels' epilogue), or an element-wise
// kernel of the VGF runtime (unary, binary, reduce: shaders/tail.glsl).
// Multiplications and additions by per-channel (or scalar) constants become
// a scale and a shift per channel (for a conv, of its weights and bias);
// then up to gpu::kMaxEpilogueOps unary ops (clamp, sigmoid, tanh, exp,
// abs, neg, sin, cos, reciprocal, log, floor, ceil, erf; rsqrt as two), the
// HardSwish and Gelu compute segments the lowering writes, and Swish (a
// sigmoid and the mul of its input by it) become the epilogue
// (gpu_ops.glsl's apply_epilogue). Each fused operator's input must be read
// by it alone (a Swish's by its two) and be an intermediate outside any
// alias group, so nothing else sees the skipped tensors. GPU-free, like
// dispatch_plan.h.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "delegates/vgf/vgf_format.h"

namespace hetsched::vgf {

// One step of a file in execution order: an operator of a graph segment, or
// a compute segment (op == nullptr).
struct PlanItem {
  uint32_t segment = 0;
  const Operator* op = nullptr;
};

struct FusedTail {
  size_t items = 0;     // items after the producer folded into it
  uint32_t output = 0;  // what the fused dispatch writes: the last folded item's output
  // Per output channel: the conv's result becomes acc * scale + shift (the
  // bias, before scaling, is the caller's to add into shift).
  std::vector<float> scale, shift;
  uint32_t epilogue_ops = 0;  // gpu::OpCode values, one per byte
  float epilogue_params[4] = {};
  // An add of a tensor of the output's shape made before the producer (a
  // ResNet block's skip connection), after the shift and before the
  // epilogue ops: the conv kernels' residual binding. Only where the caller
  // allowed it.
  std::optional<uint32_t> residual;
  std::vector<std::string> nodes, ops;  // the folded items' graph nodes and TOSA op names
};

// Readers of each resource: operator and compute-segment inputs, one more
// for an island output.
std::vector<uint32_t> count_readers(const VgfFile& file);

// The items after items[producer] (which writes `produced`, `channels`
// channels in its last dim) that fold into it; `residual_ok`: the producer's
// kernel can add a residual.
FusedTail fuse_tail(const VgfFile& file, std::span<const PlanItem> items, size_t producer, uint32_t produced,
                    int64_t channels, const std::vector<uint32_t>& readers, bool residual_ok = false);

}  // namespace hetsched::vgf
