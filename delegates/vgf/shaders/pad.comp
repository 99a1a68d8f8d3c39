// VGF pad: the output is the input surrounded by `before`/after elements of
// pad_const per dim. One invocation per output element.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "../../../shared_gpu/shaders/half_io.glsl"
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };
HALF_IN(0, XH, x)
layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };
HALF_OUT(1, YH, y)

layout(push_constant) uniform Params {
  uint count;
  uint rank;
  float pad_const;
  uint unused;
  uint out_shape[6];
  uint before[6];
  uint in_shape[6];
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
  if (i >= p.count) return;
  uint rest = i;
  uint offset = 0u;
  uint stride = 1u;
  bool inside = true;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    int s = int(rest % p.out_shape[d]) - int(p.before[d]);
    rest /= p.out_shape[d];
    if (s < 0 || s >= int(p.in_shape[d])) inside = false;
    offset += uint(max(s, 0)) * stride;
    stride *= p.in_shape[d];
  }
  STORE(1, y, i, inside ? LOAD(0, x, offset) : p.pad_const);
}
