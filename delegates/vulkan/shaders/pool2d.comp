#version 450
#extension GL_GOOGLE_include_directive : require
// MaxPool and AveragePool over NCHW (1-D pools run as height 1), one output
// per invocation, with the CPU kernel's rules for padding, dilation and
// ceil_mode (delegates/cpu/kernels/pool.cc). Push constants: PoolPush in
// delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) writeonly restrict buffer Y { float y[]; };
HALF_OUT(1, YH, y)

layout(push_constant) uniform Push {
  uint planes, in_h, in_w, out_h, out_w;
  uint kernel_h, kernel_w, stride_h, stride_w;
  uint dilation_h, dilation_w;
  uint pad_top, pad_left, pad_bottom, pad_right;
  uint mode;  // 0: max, 1: average over the input taps, 2: average counting explicit pads
} pc;

void main() {
  const uint idx = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (idx >= pc.planes * pc.out_h * pc.out_w) return;
  const uint ow = idx % pc.out_w;
  const uint oh = (idx / pc.out_w) % pc.out_h;
  const uint p = idx / (pc.out_w * pc.out_h);
  const uint base = p * pc.in_h * pc.in_w;
  const int ih0 = int(oh * pc.stride_h) - int(pc.pad_top);
  const int iw0 = int(ow * pc.stride_w) - int(pc.pad_left);
  float best = -infinity();
  float sum = 0.0;
  uint taps = 0u;
  for (uint kh = 0u; kh < pc.kernel_h; ++kh) {
    const int ih = ih0 + int(kh * pc.dilation_h);
    const bool h_in = ih >= 0 && ih < int(pc.in_h);
    const bool h_padded = ih >= -int(pc.pad_top) && ih < int(pc.in_h + pc.pad_bottom);
    for (uint kw = 0u; kw < pc.kernel_w; ++kw) {
      const int iw = iw0 + int(kw * pc.dilation_w);
      const bool w_in = iw >= 0 && iw < int(pc.in_w);
      const bool w_padded = iw >= -int(pc.pad_left) && iw < int(pc.in_w + pc.pad_right);
      if (h_in && w_in) {
        const float v = LOAD(0, x, base + uint(ih) * pc.in_w + uint(iw));
        best = max(best, v);
        sum += v;
        ++taps;
      } else if (pc.mode == 2u && h_padded && w_padded) {
        ++taps;
      }
    }
  }
  STORE(1, y, idx, pc.mode == 0u ? best : (taps == 0u ? 0.0 : sum / float(taps)));
}
