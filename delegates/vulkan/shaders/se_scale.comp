#version 450
#extension GL_GOOGLE_include_directive : require
// The second half of a squeeze-and-excitation block in one dispatch
// (MobileNetV3, EfficientNet, RegNetY, ...): y = x * gate, gate[n][c] =
// act2(b2[c] + sum_j W2[c][j] * act1(b1[j] + sum_c' W1[j][c'] *
// mean[n][c'])), where the graph has two 1x1 convs on the pooled means and
// a Mul (lowering.cc's plan_se_scale; the mean stays its own dispatch).
//
// Every workgroup scales 1024 consecutive elements of one image. It first
// computes the image's hidden units itself (each unit's sum over the
// channels split among 256 / squeeze invocations), then the gates of the
// channels its elements lie in, then the products: the small matrix
// products are repeated by every workgroup instead of waiting on one, and
// their weights come from the L2 cache after the first.
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer Means { float means[]; };  // [batch][channels]
HALF_IN(1, MeansH, means)
// W1 transposed [channels][squeeze], b1 [squeeze], W2 [channels][squeeze], b2 [channels].
layout(set = 0, binding = 2) readonly restrict buffer Weights { float weights[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
HALF_OUT(3, YH, y)

layout(push_constant) uniform Push {
  uint batch, channels, squeeze, plane;
  uint chunks;  // workgroups per image
  uint ops1, ops2;
  // Scalars, not vec4s: a vec4 would be aligned to 16 bytes in the block.
  float p1_0, p1_1, p1_2, p1_3;
  float p2_0, p2_1, p2_2, p2_3;
} pc;

const uint kChunk = 1024u;  // elements a workgroup scales
// The host checks squeeze <= kMaxSqueeze; a chunk spans at most
// kChunk / plane + 2 channels.
const uint kMaxSqueeze = 1024u;

shared float partial[256];
shared float hidden[kMaxSqueeze];
shared float gate[kChunk + 2u];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint group = linear_group();
  const uint n = group / pc.chunks;
  if (n >= pc.batch) return;  // whole workgroups only: grid_1d may round up
  const uint image_size = pc.channels * pc.plane;
  const uint first = (group % pc.chunks) * kChunk;
  const uint end = min(first + kChunk, image_size);
  const uint w1 = 0u;
  const uint b1 = pc.channels * pc.squeeze;
  const uint w2 = b1 + pc.squeeze;
  const uint b2 = w2 + pc.channels * pc.squeeze;

  // Hidden units: adjacent invocations take adjacent units, so W1's rows
  // are read in order.
  const vec4 p1 = vec4(pc.p1_0, pc.p1_1, pc.p1_2, pc.p1_3);
  for (uint unit0 = 0u; unit0 < pc.squeeze; unit0 += 256u) {
    const uint units = min(pc.squeeze - unit0, 256u);
    const uint parts = 256u / units;
    float acc = 0.0;
    if (tid < parts * units) {
      const uint j = unit0 + tid % units;
      for (uint c = tid / units; c < pc.channels; c += parts)
        acc += weights[w1 + c * pc.squeeze + j] * LOAD(1, means, n * pc.channels + c);
    }
    partial[tid] = acc;
    barrier();
    if (tid < units) {
      float sum = weights[b1 + unit0 + tid];
      for (uint q = 0u; q < parts; ++q) sum += partial[q * units + tid];
      hidden[unit0 + tid] = apply_epilogue(pc.ops1, p1, sum);
    }
    barrier();
  }

  // The gates of this chunk's channels.
  const vec4 p2 = vec4(pc.p2_0, pc.p2_1, pc.p2_2, pc.p2_3);
  const uint c_first = first / pc.plane;
  const uint c_count = (end - 1u) / pc.plane - c_first + 1u;
  for (uint k = tid; k < c_count; k += 256u) {
    const uint c = c_first + k;
    float acc = weights[b2 + c];
    for (uint j = 0u; j < pc.squeeze; ++j) acc += weights[w2 + c * pc.squeeze + j] * hidden[j];
    gate[k] = apply_epilogue(pc.ops2, p2, acc);
  }
  barrier();

  const uint base = n * image_size;
  for (uint e = first + tid; e < end; e += 256u) STORE(3, y, base + e, LOAD(0, x, base + e) * gate[e / pc.plane - c_first]);
}
