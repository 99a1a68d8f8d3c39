// VGF transpose_conv2d (TOSA TRANSPOSE_CONV2D, with dilation as ONNX
// ConvTranspose has it): NHWC input, OHWI weights, per-channel bias, NHWC
// output. One invocation per output element, gathering the input pixels
// whose scattered taps land on it: oy = iy * stride - pad_top + ky * dilation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "../../../shared_gpu/shaders/half_io.glsl"
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
HALF_IN(0, XH, x)
layout(std430, set = 0, binding = 1) readonly buffer Weight { float w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float y[]; };
HALF_OUT(3, YH, y)

// The push-constant block of conv2d.comp (multiplier unused).
layout(push_constant) uniform Params {
  uint n, ih, iw, ic, oh, ow, oc, kh, kw;
  uint stride_y, stride_x, dilation_y, dilation_x, pad_top, pad_left;
  uint multiplier;
  uint count;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint c = i % p.oc;
  uint t = i / p.oc;
  uint ox = t % p.ow;
  t /= p.ow;
  uint oy = t % p.oh;
  uint b = t / p.oh;
  float acc = 0.0;
  for (uint ky = 0u; ky < p.kh; ++ky) {
    int ty = int(oy + p.pad_top) - int(ky * p.dilation_y);
    if (ty < 0 || ty % int(p.stride_y) != 0) continue;
    uint y0 = uint(ty) / p.stride_y;
    if (y0 >= p.ih) continue;
    for (uint kx = 0u; kx < p.kw; ++kx) {
      int tx = int(ox + p.pad_left) - int(kx * p.dilation_x);
      if (tx < 0 || tx % int(p.stride_x) != 0) continue;
      uint x0 = uint(tx) / p.stride_x;
      if (x0 >= p.iw) continue;
      uint xb = ((b * p.ih + y0) * p.iw + x0) * p.ic;
      uint wb = ((c * p.kh + ky) * p.kw + kx) * p.ic;
      for (uint k = 0u; k < p.ic; ++k) acc += LOAD(0, x, xb + k) * w[wb + k];
    }
  }
  STORE(3, y, i, acc + bias[c]);
}
