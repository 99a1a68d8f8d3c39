#version 450
// NCHW <-> NHWC for 32-bit elements: the layout conversion of a device-to-
// device handoff between delegates that keep different layouts (vulkan keeps
// the graph's NCHW, vgf keeps NHWC). One invocation per destination element.
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
  uint n, c, h, w;
  uint to_nhwc;  // 1: src NCHW -> dst NHWC; 0: src NHWC -> dst NCHW
} p;

void main() {
  // 2-D dispatch so tensors beyond 65535 workgroups still fit.
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (i >= p.n * p.c * p.h * p.w) return;
  if (p.to_nhwc == 1u) {
    const uint ch = i % p.c;
    uint t = i / p.c;
    const uint x = t % p.w;
    t /= p.w;
    const uint y = t % p.h;
    const uint b = t / p.h;
    dst[i] = src[((b * p.c + ch) * p.h + y) * p.w + x];
  } else {
    const uint x = i % p.w;
    uint t = i / p.w;
    const uint y = t % p.h;
    t /= p.h;
    const uint ch = t % p.c;
    const uint b = t / p.c;
    dst[i] = src[((b * p.h + y) * p.w + x) * p.c + ch];
  }
}
