#version 450
#extension GL_GOOGLE_include_directive : require
// Convolution whose groups each read one input channel (depthwise, with any
// channel multiplier). An implicit GEMM would fill one column of its 64-wide
// channel tile, so this path instead gives each invocation one output and
// walks the window directly; it is memory bound either way. Weights keep
// their ONNX layout [out channel][1][kh][kw] for NCHW; with kNhwc (the VGF
// runtime's NHWC X and Y, where neighbouring invocations take neighbouring
// channels) they are [kh][kw][out channel], so those invocations read
// neighbouring weights too. Same push constants as conv2d.comp (ConvPush).
#include "gpu_ops.glsl"
#include "half_io.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const bool kNhwc = false;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer W { float w[]; };
layout(set = 0, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
HALF_OUT(3, YH, y)

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
} pc;

void main() {
  const uint idx = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint plane = pc.out_h * pc.out_w;
  if (idx >= pc.batch * pc.out_channels * plane) return;
  const uint pixel = kNhwc ? idx / pc.out_channels : 0u;
  const uint ow = kNhwc ? pixel % pc.out_w : idx % pc.out_w;
  const uint oh = kNhwc ? (pixel / pc.out_w) % pc.out_h : (idx / pc.out_w) % pc.out_h;
  const uint oc = kNhwc ? idx % pc.out_channels : (idx / plane) % pc.out_channels;
  const uint n = idx / (plane * pc.out_channels);
  const uint c = oc / pc.group_out;  // one input channel per group
  // X's element (ih, iw) is at x_base + ih * x_row + iw * x_column.
  const uint x_column = kNhwc ? pc.channels : 1u;
  const uint x_row = pc.in_w * x_column;
  const uint x_base = kNhwc ? n * pc.in_h * pc.in_w * pc.channels + c : (n * pc.channels + c) * pc.in_h * pc.in_w;
  // W's element (kh, kw) is at w_base + (kh * kernel_w + kw) * w_tap.
  const uint w_base = kNhwc ? oc : oc * pc.kernel_h * pc.kernel_w;
  const uint w_tap = kNhwc ? pc.out_channels : 1u;
  const int ih0 = int(oh * pc.stride_h) - int(pc.pad_top);
  const int iw0 = int(ow * pc.stride_w) - int(pc.pad_left);
  float acc = 0.0;
  for (uint kh = 0u; kh < pc.kernel_h; ++kh) {
    const int ih = ih0 + int(kh * pc.dilation_h);
    if (ih < 0 || ih >= int(pc.in_h)) continue;
    for (uint kw = 0u; kw < pc.kernel_w; ++kw) {
      const int iw = iw0 + int(kw * pc.dilation_w);
      if (iw < 0 || iw >= int(pc.in_w)) continue;
      acc = fma(w[w_base + (kh * pc.kernel_w + kw) * w_tap], LOAD(0, x, x_base + uint(ih) * x_row + uint(iw) * x_column), acc);
    }
  }
  if (pc.has_bias != 0u) acc += bias[oc];
  STORE(3, y, idx, apply_epilogue(pc.epilogue_ops, vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3), acc));
}
