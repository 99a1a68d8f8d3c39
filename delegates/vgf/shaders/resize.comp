// VGF resize over NHWC with per-axis tap tables: row o of a table holds
// (first source index, second source index, weight of the second), so any
// coordinate transformation reduces to a lookup. Indices are clamped into
// the input. One invocation per output element.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "../../../shared_gpu/shaders/half_io.glsl"
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
HALF_IN(0, XH, x)
layout(std430, set = 0, binding = 1) readonly buffer TapsY { float taps_y[]; };
layout(std430, set = 0, binding = 2) readonly buffer TapsX { float taps_x[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Out { float y[]; };
HALF_OUT(3, YH, y)

layout(push_constant) uniform Params {
  uint n, ih, iw, c, oh, ow;
  uint bilinear;
  uint count;
} p;

uint tap_index(float v, uint len) { return uint(clamp(v, 0.0, float(len - 1u))); }

float at(uint b, uint yy, uint xx, uint ch) { return LOAD(0, x, ((b * p.ih + yy) * p.iw + xx) * p.c + ch); }

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint ch = i % p.c;
  uint t = i / p.c;
  uint ox = t % p.ow;
  t /= p.ow;
  uint oy = t % p.oh;
  uint b = t / p.oh;
  uint y_lo = tap_index(taps_y[oy * 3u], p.ih);
  uint y_hi = tap_index(taps_y[oy * 3u + 1u], p.ih);
  float wy = taps_y[oy * 3u + 2u];
  uint x_lo = tap_index(taps_x[ox * 3u], p.iw);
  uint x_hi = tap_index(taps_x[ox * 3u + 1u], p.iw);
  float wx = taps_x[ox * 3u + 2u];
  if (p.bilinear == 0u) {
    STORE(3, y, i, at(b, y_lo, x_lo, ch));
    return;
  }
  // The portable kernel's order of operations: rows first, then columns.
  float top = at(b, y_lo, x_lo, ch) + (at(b, y_lo, x_hi, ch) - at(b, y_lo, x_lo, ch)) * wx;
  float bottom = at(b, y_hi, x_lo, ch) + (at(b, y_hi, x_hi, ch) - at(b, y_hi, x_lo, ch)) * wx;
  STORE(3, y, i, top + (bottom - top) * wy);
}
