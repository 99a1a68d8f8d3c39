// VGF depthwise_conv2d: NHWC input of C channels, weights [KH, KW, C, M],
// bias [C*M], NHWC output of C*M channels (channel c*M + m reads input
// channel c). One invocation per output element.
#version 450
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
layout(std430, set = 0, binding = 1) readonly buffer Weight { float w[]; };
layout(std430, set = 0, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float y[]; };

layout(push_constant) uniform Params {
  uint n, ih, iw, ic, oh, ow, oc, kh, kw;
  uint stride_y, stride_x, dilation_y, dilation_x, pad_top, pad_left;
  uint multiplier;
  uint count;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint o = i % p.oc;
  uint t = i / p.oc;
  uint ox = t % p.ow;
  t /= p.ow;
  uint oy = t % p.oh;
  uint b = t / p.oh;
  uint c = o / p.multiplier;
  uint m = o % p.multiplier;
  float acc = 0.0;
  for (uint ky = 0u; ky < p.kh; ++ky) {
    int y0 = int(oy * p.stride_y + ky * p.dilation_y) - int(p.pad_top);
    if (y0 < 0 || y0 >= int(p.ih)) continue;
    for (uint kx = 0u; kx < p.kw; ++kx) {
      int x0 = int(ox * p.stride_x + kx * p.dilation_x) - int(p.pad_left);
      if (x0 < 0 || x0 >= int(p.iw)) continue;
      acc += x[((b * p.ih + uint(y0)) * p.iw + uint(x0)) * p.ic + c] * w[((ky * p.kw + kx) * p.ic + c) * p.multiplier + m];
    }
  }
  y[i] = acc + bias[o];
}
