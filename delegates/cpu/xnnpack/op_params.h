// What XNNPACK needs to know about one node, read from its ONNX attributes
// and constant inputs. Coverage (coverage.h) and lowering (lowering.h) read
// a node through the same functions, so a node is lowered exactly when it
// was judged covered.
//
// Every reader fails with kUnsupported and a plain reason ("XNNPACK's
// average pooling has no dilation") when XNNPACK of the snapshot hetsched
// links (Debian's git 2022-02-16) cannot run the node as ONNX defines it;
// the node then stays on the portable kernels and the reason is logged.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "graph/graph.h"
#include "graph/passes/fused_activation.h"
#include "hetsched/status.h"

namespace hetsched::cpu::xnnpack {

// Output clamp that XNNPACK applies in the same kernel (its output_min/max).
struct Clamp {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
};

// 2-D sliding window with XNNPACK's explicit, possibly asymmetric padding.
struct Window2d {
  uint32_t kernel_h = 1, kernel_w = 1;
  uint32_t stride_h = 1, stride_w = 1;
  uint32_t dilation_h = 1, dilation_w = 1;
  uint32_t pad_top = 0, pad_right = 0, pad_bottom = 0, pad_left = 0;
};

struct ConvParams {
  Window2d window;
  int64_t groups = 1;
  int64_t in_channels = 0;   // C of X
  int64_t out_channels = 0;  // M
  // groups == C and groups > 1: XNNPACK's depthwise convolution (filter
  // 1HWO, output channel c*multiplier + j reads input channel c).
  bool depthwise = false;
  // A fused activation (graph/passes/fused_activation.h): Relu and Clip
  // become the convolution's own output clamp; HardSigmoid too, as
  // clamp(alpha * y + beta, 0, 1) with alpha and beta folded into the
  // filter and bias (`out_scale`, `out_shift`); Sigmoid, HardSwish and
  // LeakyRelu follow it as a separate XNNPACK node (`then`).
  Clamp clamp;
  float out_scale = 1.f;
  float out_shift = 0.f;
  FusedActivation then;
};
Result<ConvParams> read_conv(const Graph& graph, const Node& node);

// ConvTranspose over a rank-4 X as XNNPACK's deconvolution: filter laid
// out [M, kH, kW, C/group] per its contract, bias [M] (zeros when absent).
// XNNPACK's adjustment is ONNX's output_padding and must stay below the
// stride; negative pads (an output_shape beyond the full result) have no
// XNNPACK form.
struct ConvTransposeParams {
  Window2d window;  // stride = XNNPACK's upsampling
  uint32_t adjustment_h = 0, adjustment_w = 0;
  int64_t groups = 1;
  int64_t group_in = 0, group_out = 0;
  std::vector<float> filter;
  std::vector<float> bias;
};
Result<ConvTransposeParams> read_conv_transpose(const Graph& graph, const Node& node);

// MaxPool and AveragePool. ONNX's ceil_mode becomes extra end padding: the
// rounded-up last window then fits, and XNNPACK ignores padded taps (max)
// or leaves them out of the divisor (average, i.e. count_include_pad=0).
struct PoolParams {
  Window2d window;
  // AveragePool with count_include_pad=1 and explicit pads: XNNPACK leaves
  // its padding out of the divisor, so the explicit pads are a constant pad
  // of zeros before the pool (which then counts them as input), and
  // `window`'s padding is only what ceil_mode's last window reaches past
  // them, which ONNX leaves out of the divisor too. PyTorch 2.x's exporter
  // writes Inception's avg_pool2d(3, 1, padding=1) so; on the portable
  // kernel its nine pools took a quarter of Inception v3's time.
  uint32_t pre_top = 0, pre_left = 0, pre_bottom = 0, pre_right = 0;
  bool pad_first() const { return pre_top + pre_left + pre_bottom + pre_right > 0; }
};
Result<PoolParams> read_pool(const Graph& graph, const Node& node);

// Relu and Clip.
Result<Clamp> read_clamp(const Graph& graph, const Node& node);

// Resize, linear on H and W only: XNNPACK's flags for the coordinate transform.
struct ResizeParams {
  uint32_t flags = 0;
  int64_t out_h = 0, out_w = 0;
};
Result<ResizeParams> read_resize(const Graph& graph, const Node& node);

// Gemm and MatMul with a constant B as XNNPACK's fully connected op:
// filter [N, K] (output channels first), bias [N] (zeros when absent),
// alpha and beta already applied.
struct FullyConnectedParams {
  int64_t input_channels = 0;   // K
  int64_t output_channels = 0;  // N
  std::vector<float> filter;
  std::vector<float> bias;
};
Result<FullyConnectedParams> read_fully_connected(const Graph& graph, const Node& node);

// BatchNormalization (inference form) as a per-channel y = x * scale + shift.
struct ChannelAffine {
  std::vector<float> scale;
  std::vector<float> shift;
};
Result<ChannelAffine> read_batch_norm(const Graph& graph, const Node& node);

// HardSigmoid's alpha and beta as a one-element scale and shift; XNNPACK
// runs it as clamp(x * alpha + beta, 0, 1).
Result<ChannelAffine> read_hard_sigmoid(const Node& node);

// Pad in constant mode with constant, non-negative pads: per dim of the
// graph's order, the elements added before and after.
struct PadParams {
  std::vector<size_t> before;
  std::vector<size_t> after;
  float value = 0.f;
};
Result<PadParams> read_pad(const Graph& graph, const Node& node);

// PRelu on a rank-4 X with one slope per channel.
Result<std::vector<float>> read_prelu_slopes(const Graph& graph, const Node& node);

// ReduceMean over H and W (axes {2, 3} in any spelling) of a rank-4 X:
// XNNPACK's global average pooling, as torchvision's MnasNet, ShuffleNet
// and many squeeze-excite blocks write their pooling. Returns keepdims.
Result<bool> read_spatial_mean(const Graph& graph, const Node& node);

// The constant behind input i of `node`, or nullptr.
const Tensor* constant_input(const Graph& graph, const Node& node, size_t i);

}  // namespace hetsched::cpu::xnnpack
