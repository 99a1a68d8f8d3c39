// Depthwise convs (one output channel per input channel) on NHWC data, as
// an NHWC step between XNNPACK segments, so that the SiLU reading the
// conv's output runs in its epilogue: an inverted-residual block with SiLU
// (EfficientNet, MnasNet-style searches, MobileViT) is depthwise conv ->
// BatchNorm (folded) -> SiLU, and XNNPACK's depthwise conv (this snapshot)
// has only a clamp to fuse, leaving the SiLU a pass of its own over the
// block's largest tensor.
//
// Each task computes whole output rows (two at a time where a square
// filter at stride 1 lets both read each shared input row once):
// per output pixel, the channels in
// runs of 64 whose accumulators stay in registers over the taps inside
// the input (the padding is skipped, not read), then the bias and the
// activation over the row while it is in cache, and a squeeze's channel
// sums of the row where one reads the output. Any kernel size, stride,
// dilation and padding.
#pragma once

#include <memory>

#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

// ok when `node` is a depthwise Conv this kernel runs: static f32 rank-4
// X, one output channel per input channel, constant f32 weights and bias;
// or a grouped one of 2 or 4 channels a group, in and out (ResNeXt-50
// 32x4d's first stage, where XNNPACK's GEMM per group ran at 7 GFMA/s),
// each output channel's inputs shuffled to its lane from the 16-channel
// vector it sits in.
Status depthwise_nhwc_supported(const Graph& graph, const Node& node);

// The group width this kernel runs `node` with (1: depthwise), or 0.
int64_t nhwc_group_width(const Graph& graph, const Node& node);

// The op for ctx.node on NHWC data, writing `output` (the node's own
// output, or that of what its epilogue takes in) with the node's fused
// activation, or `post` when that is not empty; and, unless kNoValue,
// `mean` ([N, C, 1, 1]): each channel's mean of `output` over its H x W,
// summed from every finished row while it is in L1 (a squeeze-and-excitation
// block's squeeze: as an XNNPACK global average pooling of its own it read
// the whole map again, EfficientNet-B0's 16 squeezes 0.60 ms at 1 thread
// against ONNX Runtime's 0.29).
Result<std::unique_ptr<FastOp>> make_depthwise_nhwc(const FastOpContext& ctx, ValueId output, ActivationPass post,
                                                    ValueId mean = kNoValue);

}  // namespace hetsched::cpu::fast
