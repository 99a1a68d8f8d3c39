#version 450
#extension GL_GOOGLE_include_directive : require
// Resize (nearest and bilinear) of NCHW planes. The host maps every output
// row and column to its input taps once (the CPU kernel's tables, so both
// round the same way) and uploads them: rows first (out_h entries), then
// columns (out_w entries), each {lo, hi, weight bits}. Push constants:
// ResizePush in delegates/vulkan/kernel_params.h.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer Taps { uint taps[]; };
layout(set = 0, binding = 2) writeonly restrict buffer Y { float y[]; };
HALF_OUT(2, YH, y)

layout(push_constant) uniform Push { uint planes, in_h, in_w, out_h, out_w, linear; } pc;

void main() {
  const uint idx = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (idx >= pc.planes * pc.out_h * pc.out_w) return;
  const uint ow = idx % pc.out_w;
  const uint oh = (idx / pc.out_w) % pc.out_h;
  const uint p = idx / (pc.out_w * pc.out_h);
  const uint r = 3u * oh;
  const uint c = 3u * (pc.out_h + ow);
  const uint top = p * pc.in_h * pc.in_w + taps[r] * pc.in_w;
  const uint col_lo = taps[c];
  if (pc.linear == 0u) {
    STORE(2, y, idx, LOAD(0, x, top + col_lo));
    return;
  }
  const uint bottom = p * pc.in_h * pc.in_w + taps[r + 1u] * pc.in_w;
  const uint col_hi = taps[c + 1u];
  const float rw = uintBitsToFloat(taps[r + 2u]);
  const float cw = uintBitsToFloat(taps[c + 2u]);
  const float t = LOAD(0, x, top + col_lo) + (LOAD(0, x, top + col_hi) - LOAD(0, x, top + col_lo)) * cw;
  const float b = LOAD(0, x, bottom + col_lo) + (LOAD(0, x, bottom + col_hi) - LOAD(0, x, bottom + col_lo)) * cw;
  STORE(2, y, idx, t + (b - t) * rw);
}
