// VGF avg_pool2d and max_pool2d over NHWC. Taps in the padding are skipped:
// they count towards neither the maximum nor the average (TOSA semantics;
// count_include_pad is lowered as an explicit pad before the pool).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "../../../shared_gpu/shaders/half_io.glsl"
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
HALF_IN(0, XH, x)
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };
HALF_OUT(1, YH, y)

// mode: 0 average, 1 maximum.
layout(push_constant) uniform Params {
  uint n, ih, iw, c, oh, ow, kh, kw;
  uint stride_y, stride_x, pad_top, pad_left;
  uint mode;
  uint count;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint ch = i % p.c;
  uint t = i / p.c;
  uint ox = t % p.ow;
  t /= p.ow;
  uint oy = t % p.oh;
  uint b = t / p.oh;
  // Compensated (Kahan) sum: the portable kernel sums in double.
  precise float sum = 0.0;
  precise float carry = 0.0;
  float best = uintBitsToFloat(0xff800000u);
  uint taps = 0u;
  for (uint ky = 0u; ky < p.kh; ++ky) {
    int y0 = int(oy * p.stride_y + ky) - int(p.pad_top);
    if (y0 < 0 || y0 >= int(p.ih)) continue;
    for (uint kx = 0u; kx < p.kw; ++kx) {
      int x0 = int(ox * p.stride_x + kx) - int(p.pad_left);
      if (x0 < 0 || x0 >= int(p.iw)) continue;
      float v = LOAD(0, x, ((b * p.ih + uint(y0)) * p.iw + uint(x0)) * p.c + ch);
      best = max(best, v);
      precise float term = v - carry;
      precise float next = sum + term;
      carry = (next - sum) - term;
      sum = next;
      ++taps;
    }
  }
  STORE(1, y, i, p.mode == 1u ? best : (taps == 0u ? 0.0 : sum / float(taps)));
}
