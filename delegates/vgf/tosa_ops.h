// The TOSA-style operators of VGF graph modules: their names, arity,
// attributes and the shape relation between their operands.
//
// Shapes here are resource shapes (memory order): rank-4 activations are
// NHWC, conv2d weights OHWI ([OC, KH, KW, IC]), depthwise_conv2d weights
// [KH, KW, C, M]. Operators of one module follow TOSA semantics, except where
// a comment says otherwise.
#pragma once

#include <vector>

#include "delegates/vgf/vgf_format.h"

namespace hetsched::vgf {

// add, sub, mul, pow: two operands of the output's rank, each dim equal to
// the output's or 1 (broadcast).
bool is_binary(OpCode op);
// abs, neg, sin, cos, exp, reciprocal, rsqrt, sigmoid, tanh, log, floor,
// ceil, erf, and clamp.
bool is_unary(OpCode op);

// Checks `op` against its rule: operand counts, the attribute kind and its
// values, and every operand shape (resource ids must already be in range).
// The runtime relies on this to keep every shader access in bounds.
Status check_operator(const Operator& op, const std::vector<Resource>& resources);

// Output size of a sliding window: floor((in + pad_before + pad_after -
// ((kernel - 1) * dilation + 1)) / stride) + 1, or 0 when the window does not fit.
int64_t window_output_size(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                           int64_t dilation);

}  // namespace hetsched::vgf
