#version 450
#extension GL_GOOGLE_include_directive : require
// The second pass of a split-K convolution (conv2d.comp with kSplits > 1):
// each output element is the sum of its kSplits partial sums, in slice
// order, plus the bias and the residual, through the fused epilogue. One invocation per
// element of Y, over a 2-D grid (linear_group()).
// Push constants: ConvPush in shared_gpu/conv_kernel.h, the same words as
// the conv dispatch's.
#include "gpu_ops.glsl"
#include "half_io.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint kSplits = 2u;
layout(constant_id = 1) const bool kNhwc = false;  // Y (and so each slice) is NHWC

// kSplits slices, each laid out like Y.
layout(set = 0, binding = 0) readonly restrict buffer Partial { float partial[]; };
layout(set = 0, binding = 1) readonly restrict buffer Bias { float bias[]; };
layout(set = 0, binding = 2) writeonly restrict buffer Y { float y[]; };
HALF_OUT(2, YH, y)
// Added before the epilogue ops where pc.has_residual (conv2d.comp's binding 5).
layout(set = 0, binding = 3) readonly restrict buffer Residual { float residual[]; };
HALF_IN(3, ResidualH, residual)

layout(push_constant) uniform Push {
  uint batch, channels, in_h, in_w;
  uint out_channels, out_h, out_w;
  uint group_channels, group_out;
  uint kernel_h, kernel_w, stride_h, stride_w;
  uint dilation_h, dilation_w, pad_top, pad_left;
  uint has_bias;
  uint epilogue_ops;
  // Scalars, not a vec4: a vec4 would be aligned to 16 bytes in the block.
  float epilogue_p0, epilogue_p1, epilogue_p2, epilogue_p3;
  uint has_residual;
} pc;

void main() {
  const uint plane = pc.out_h * pc.out_w;
  const uint total = pc.batch * pc.out_channels * plane;
  const uint i = linear_group() * 256u + gl_LocalInvocationIndex;
  if (i >= total) return;
  float v = 0.0;
  for (uint s = 0u; s < kSplits; ++s) v += partial[s * total + i];
  if (pc.has_bias != 0u) v += bias[kNhwc ? i % pc.out_channels : (i / plane) % pc.out_channels];
  if (pc.has_residual != 0u) v += LOAD(3, residual, i);
  STORE(2, y, i, apply_epilogue(pc.epilogue_ops, vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3), v));
}
