#version 450
#extension GL_GOOGLE_include_directive : require
// ConvTranspose (1-D as height 1, 2-D; grouped; any stride, dilation, pads
// and output padding) as a gather: each invocation computes one output
// element, summing over the input pixels and taps that land on it
// (oh = ih * stride - pad + kh * dilation), so no two invocations write one
// element and no atomics are needed. Weights keep their ONNX layout
// [in channel][out channel of group][kh][kw], already multiplied by any
// folded BatchNormalization scale; bias and the epilogue (up to two unary
// ops) follow. Same push constants as conv2d.comp (ConvPush); pads are
// signed (output_shape may pad the end negatively).
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

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
  float epilogue_p0, epilogue_p1, epilogue_p2, epilogue_p3;
} pc;

void main() {
  const uint idx = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (idx >= pc.batch * pc.out_channels * pc.out_h * pc.out_w) return;
  const int ow = int(idx % pc.out_w);
  uint t = idx / pc.out_w;
  const int oh = int(t % pc.out_h);
  t /= pc.out_h;
  const uint oc = t % pc.out_channels;
  const uint n = t / pc.out_channels;
  const uint gi = oc / pc.group_out;
  const uint m = oc % pc.group_out;
  const uint taps = pc.kernel_h * pc.kernel_w;
  const uint first_channel = n * pc.channels + gi * pc.group_channels;
  const uint in_plane = pc.in_h * pc.in_w;
  const int sh = int(pc.stride_h), sw = int(pc.stride_w);

  float acc = 0.0;
  for (uint kh = 0u; kh < pc.kernel_h; ++kh) {
    const int rh = oh + int(pc.pad_top) - int(kh * pc.dilation_h);
    if (rh < 0 || rh % sh != 0 || rh / sh >= int(pc.in_h)) continue;
    const uint ih = uint(rh / sh);
    for (uint kw = 0u; kw < pc.kernel_w; ++kw) {
      const int rw = ow + int(pc.pad_left) - int(kw * pc.dilation_w);
      if (rw < 0 || rw % sw != 0 || rw / sw >= int(pc.in_w)) continue;
      const uint pixel = ih * pc.in_w + uint(rw / sw);
      const uint tap = kh * pc.kernel_w + kw;
      for (uint c = 0u; c < pc.group_channels; ++c)
        acc += LOAD(0, x, (first_channel + c) * in_plane + pixel) *
               w[((gi * pc.group_channels + c) * pc.group_out + m) * taps + tap];
    }
  }
  if (pc.has_bias != 0u) acc += bias[oc];
  STORE(3, y, idx, apply_epilogue(pc.epilogue_ops, vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3), acc));
}
