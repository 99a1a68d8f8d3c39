// Strided copy: the data movement behind transpose, slice, concat and
// reshape. Iterates over `shape`; element idx reads src at src_offset +
// sum(idx[d] * src_strides[d]) (strides may be negative: reversed slices) and
// writes dst at dst_offset + sum(idx[d] * dst_strides[d]).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "../../../shared_gpu/shaders/half_io.glsl"
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { float src[]; };
HALF_IN(0, SrcH, src)
layout(std430, set = 0, binding = 1) writeonly buffer Dst { float dst[]; };
HALF_OUT(1, DstH, dst)

layout(push_constant) uniform Params {
  uint count;
  uint rank;
  uint src_offset;
  uint dst_offset;
  uint shape[6];
  int src_strides[6];
  uint dst_strides[6];
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint rest = i;
  int s = int(p.src_offset);
  uint t = p.dst_offset;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint idx = rest % p.shape[d];
    rest /= p.shape[d];
    s += int(idx) * p.src_strides[d];
    t += idx * p.dst_strides[d];
  }
  STORE(1, dst, t, LOAD(0, src, s));
}
