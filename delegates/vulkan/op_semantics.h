// What a node's attributes and constant inputs mean, read into plain values
// for the Vulkan delegate's lowering and its supports() checks. The rules
// are ONNX's, as the portable CPU kernels (the oracle) apply them; where a
// kernel's arithmetic must match the oracle bit for bit (Resize's tap
// tables), it is done here on the host.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "delegates/vulkan/kernel_params.h"
#include "graph/graph.h"
#include "graph/slice_window.h"
#include "hetsched/status.h"

namespace hetsched::vulkan {

// Relu, Sigmoid, Tanh, Exp, Neg, Abs, Clip, HardSigmoid, HardSwish, Sin,
// Cos, Reciprocal, Sqrt, Erf, Gelu, Floor, Ceil, Log, Round. (LeakyRelu
// stays CPU-only on purpose: the policy tests and docs/cli.md use it as
// the op no GPU delegate takes.)
bool is_unary_elementwise(std::string_view op);
// Add, Sub, Mul, Div, Pow, and Min and Max of two inputs; nullopt for
// anything else.
std::optional<OpCode> binary_op_code(std::string_view op);

struct UnaryOp {
  OpCode code = OpCode::kNone;
  float p0 = 0.f, p1 = 0.f;
};
// The op and its parameters (Clip's bounds, HardSigmoid's alpha and beta;
// Gelu's approximate picks the op).
// kUnsupported when Clip's bounds are computed at run time.
Result<UnaryOp> read_unary_op(const Graph& graph, NodeId node);

// The activation import fused into a Conv (graph/passes/fused_activation.h)
// as an epilogue op; nullopt when the node carries none. kUnsupported for
// kinds the shaders lack (LeakyRelu).
Result<std::optional<UnaryOp>> read_conv_activation(const Node& conv);

// BatchNormalization (inference) as y = x * mul[c] + add[c], folded in f32
// exactly as the CPU kernel folds it. kUnsupported unless scale, B, mean
// and var are constants.
struct BatchNormFactors {
  std::vector<float> mul, add;
};
Result<BatchNormFactors> read_batch_norm(const Graph& graph, NodeId node);

// Sliding-window geometry of Conv and the pools, always 2-D (1-D windows
// run as height 1), with auto_pad resolved into pads.
struct Window2d {
  int64_t in_h = 1, in_w = 1;
  int64_t out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};
// From the attributes of a window op over `x` (N, C, spatial...) with
// `kernel`; kInvalidArgument when the output `y` inferred for the node
// does not have the spatial dims they give.
Result<Window2d> window_2d(const Attributes& attrs, const Shape& x, const std::vector<int64_t>& kernel, const Shape& y,
                           bool ceil_mode);

// Nodes whose output is their input's bytes. A Cast is one when it keeps
// the dtype (f32 to f32: the fp16 pass turns a model's casts to f16 into
// those); other Casts are dispatches. Dropout at inference is the identity,
// as in the CPU kernel.
bool is_alias_node(const Graph& g, const Node& n);

// ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd.
bool is_reduce_op(std::string_view op);

// A reduction's reduced axes, normalised (all axes when none are given), or
// nullopt when noop_with_empty_axes makes the node a copy.
Result<std::optional<std::vector<int64_t>>> read_reduce_axes(const Graph& graph, NodeId node);

// Gather/GatherElements' constant indices, range-checked against the
// gathered axis and wrapped to non-negative int32. kUnsupported when the
// indices are computed at run time; kInvalidArgument naming the first index
// out of range.
Result<std::vector<int32_t>> read_gather_indices(const Graph& graph, NodeId node);

// Resize's mapping of each output row and column to its input taps,
// computed in double as the ONNX reference does (the table the CPU kernel
// builds, except that align_corners and pytorch_half_pixel use ONNX's
// unrounded resized length when the node gives scales).
struct ResizeTap {
  int64_t lo = 0, hi = 0;
  float weight = 0.f;  // of `hi`; linear mode only
};
struct ResizeTaps {
  bool linear = false;
  std::vector<ResizeTap> rows, cols;
};
Result<ResizeTaps> resize_taps(const Graph& graph, NodeId node);

}  // namespace hetsched::vulkan
