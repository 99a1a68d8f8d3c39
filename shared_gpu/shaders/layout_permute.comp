#version 450
// NCHW <-> NHWC for 32-bit or 16-bit elements: the layout conversion of a
// handoff between the host's (and the Vulkan delegate's) NCHW and a VGF
// island's NHWC — device to device, and for uploads and readbacks, which
// copy the host's bytes as they are and convert here. One invocation per
// destination word: a 32-bit element, or two 16-bit ones (an even count;
// the buffers are words, so no 16-bit storage feature is needed).
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
  uint n, c, h, w;
  uint to_nhwc;  // 1: src NCHW -> dst NHWC; 0: src NHWC -> dst NCHW
  uint sixteen;  // 1: 16-bit elements
} p;

// The source element that destination element `i` takes.
uint source_of(uint i) {
  if (p.to_nhwc == 1u) {
    const uint ch = i % p.c;
    uint t = i / p.c;
    const uint x = t % p.w;
    t /= p.w;
    const uint y = t % p.h;
    const uint b = t / p.h;
    return ((b * p.c + ch) * p.h + y) * p.w + x;
  }
  const uint x = i % p.w;
  uint t = i / p.w;
  const uint y = t % p.h;
  t /= p.h;
  const uint ch = t % p.c;
  const uint b = t / p.c;
  return ((b * p.h + y) * p.w + x) * p.c + ch;
}

// 16-bit element j of the source (little-endian halves of its words).
uint half_at(uint j) { return (src[j >> 1] >> ((j & 1u) * 16u)) & 0xffffu; }

void main() {
  // 2-D dispatch so tensors beyond 65535 workgroups still fit.
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  const uint elements = p.n * p.c * p.h * p.w;
  if (p.sixteen == 0u) {
    if (i < elements) dst[i] = src[source_of(i)];
  } else if (2u * i < elements) {
    dst[i] = half_at(source_of(2u * i)) | (half_at(source_of(2u * i + 1u)) << 16u);
  }
}
