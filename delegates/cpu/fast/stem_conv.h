// A network's stem: a dense conv on a few input channels (an image's 3),
// 3x3 stride 2 in MobileNet, EfficientNet, MnasNet, RegNet and ShuffleNet,
// run directly on NHWC output (stem_conv.cc) rather than as a GEMM of depth
// taps x Cin = 27, too shallow for the fast GEMM's tiles and for XNNPACK's
// (which ran MnasNet's 3 -> 32 stem, 112x112 out, in 0.31 ms against ONNX
// Runtime's 0.17, its input's NCHW -> NHWC transpose included).
#pragma once

#include <memory>

#include "delegates/cpu/fast/conv_group.h"
#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

// Whether the stem kernel runs a conv of this shape: group 1 (the caller's
// check), at most 4 input channels and a depth (taps x Cin) of at most 64
// (a 7x7 stem on 3 channels, depth 147, stays on the fast GEMM, which ran
// it at 0.62-0.67x XNNPACK's time), 8 to 64 output channels (to 128 for a
// patchify stem: kernel = stride, no padding), dilation 1.
bool stem_conv_fits(const ConvShape& shape);

// The op for ctx.node (a dense conv stem_conv_fits() takes; ctx.nhwc: its
// output NHWC, its input NHWC or, ctx.nchw_input, the island's NCHW input)
// with the fused activation and what `group` fuses (a SiLU).
Result<std::unique_ptr<FastOp>> make_stem_conv(const FastOpContext& ctx, const ConvGroup& group);

}  // namespace hetsched::cpu::fast
