// What other op families reuse of the neural-network ops' shape inference
// (ops_nn.cc), so that one node kind is never read two ways.
#pragma once

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

// Conv's output shape (N, M, spatial...) for input X of shape `x` (rank 3 or
// 4, checked by the caller) and weight W of type `w` (its dtype is only printed), from Conv's
// attributes (group, kernel_shape, strides, dilations, pads, auto_pad).
// QLinearConv and ConvInteger have the same attributes and geometry. Errors
// are plain reasons; callers put the node in front.
Result<Shape> conv_output_shape(const Attributes& attrs, const Shape& x, const TensorType& w);

// MatMul's output shape (numpy matmul: 1-D operands promoted, batch dims
// broadcast) for A and B of types `a` and `b` (dtypes only printed).
// QLinearMatMul and MatMulInteger multiply the same way.
Result<Shape> matmul_output_shape(const TensorType& a, const TensorType& b);

}  // namespace hetsched
