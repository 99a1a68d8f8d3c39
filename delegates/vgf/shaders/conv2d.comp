// VGF conv2d: NHWC input, OHWI weights, per-channel bias, NHWC output. One
// invocation per output element; taps in the padding are skipped.
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { float w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint n, ih, iw, ic, oh, ow, oc, kh, kw;
  uint stride_y, stride_x, dilation_y, dilation_x, pad_top, pad_left;
  uint multiplier;  // depthwise only
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
    int y0 = int(oy * p.stride_y + ky * p.dilation_y) - int(p.pad_top);
    if (y0 < 0 || y0 >= int(p.ih)) continue;
    for (uint kx = 0u; kx < p.kw; ++kx) {
      int x0 = int(ox * p.stride_x + kx * p.dilation_x) - int(p.pad_left);
      if (x0 < 0 || x0 >= int(p.iw)) continue;
      uint xb = ((b * p.ih + uint(y0)) * p.iw + uint(x0)) * p.ic;
      uint wb = ((c * p.kh + ky) * p.kw + kx) * p.ic;
      for (uint k = 0u; k < p.ic; ++k) acc += x[xb + k] * w[wb + k];
    }
  }
  y[i] = acc + bias[c];
}
