#version 450
#extension GL_GOOGLE_include_directive : require
// The second half of a squeeze-and-excitation block in one dispatch
// (MobileNetV3, EfficientNet, RegNetY, ...): y = x * gate, gate[n][c] =
// act2(b2[c] + sum_j W2[c][j] * act1(b1[j] + sum_c' W1[j][c'] *
// mean[n][c'])), where the graph has two 1x1 convs on the pooled means and
// a Mul (the Vulkan delegate's plan_se_scale, on NCHW; the VGF runtime's
// dispatch plan, on NHWC: kNhwc). The mean stays a dispatch of its own.
//
// Every workgroup scales 1024 consecutive elements of one image. It first
// computes the image's hidden units itself, then the gates of the channels
// its elements lie in (NCHW: a few planes; NHWC: up to 1024 channels, a run
// that may wrap past the last channel to the first), then the products: the small matrix products are
// repeated by every workgroup instead of waiting on one, and their weights
// come from the L2 cache after the first. Both products are latency-bound
// (a workgroup reads channels x squeeze weights of each matrix), so they
// read four hidden units' weights per load (squeeze is padded to a multiple
// of 4 on the host), keep four independent sums per invocation, and split
// each gate's sum over several invocations: with one invocation per hidden
// unit and per gate walking its whole row, EfficientNet-B0's 1152 x 48
// blocks took 45-55 us each on an H100.
// Push constants: SeScalePush in shared_gpu/se_kernel.h.
#include "gpu_ops.glsl"
#include "half_io.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const bool kNhwc = false;  // X and Y are [n][h][w][c]

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer Means { float means[]; };  // [batch][channels]
HALF_IN(1, MeansH, means)
// W1 transposed [channels][squeeze4], b1 [squeeze4], W2 [channels][squeeze4],
// b2 [channels] (padded to whole vec4s), squeeze4 = squeeze rounded up to a
// multiple of 4, the padding zero.
layout(set = 0, binding = 2) readonly restrict buffer Weights { vec4 weights[]; };
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
// kChunk / plane + 2 channels (NCHW) or kChunk (NHWC).
const uint kMaxSqueeze = 1024u;

shared vec4 partial4[256];
shared float partial[256];
shared vec4 hidden[kMaxSqueeze / 4u];
shared float gate[kChunk + 2u];

float mean_of(uint n, uint c) { return LOAD(1, means, n * pc.channels + c); }

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint group = linear_group();
  const uint n = group / pc.chunks;
  if (n >= pc.batch) return;  // whole workgroups only: grid_1d may round up
  const uint image_size = pc.channels * pc.plane;
  const uint first = (group % pc.chunks) * kChunk;
  const uint end = min(first + kChunk, image_size);
  const uint quads = (pc.squeeze + 3u) / 4u;  // <= 256
  // In vec4s.
  const uint w1 = 0u;
  const uint b1 = pc.channels * quads;
  const uint w2 = b1 + quads;
  const uint b2 = w2 + pc.channels * quads;

  // Hidden units, four per invocation: invocation tid takes units
  // 4 (tid % quads) .. + 3 and every parts-th channel from tid / quads, so
  // adjacent invocations read adjacent weights; four sums in flight.
  const vec4 p1 = vec4(pc.p1_0, pc.p1_1, pc.p1_2, pc.p1_3);
  {
    const uint parts = 256u / quads;
    vec4 a0 = vec4(0.0), a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0);
    if (tid < parts * quads) {
      const uint q = tid % quads;
      uint c = tid / quads;
      for (; c + 3u * parts < pc.channels; c += 4u * parts) {
        a0 += weights[w1 + c * quads + q] * mean_of(n, c);
        a1 += weights[w1 + (c + parts) * quads + q] * mean_of(n, c + parts);
        a2 += weights[w1 + (c + 2u * parts) * quads + q] * mean_of(n, c + 2u * parts);
        a3 += weights[w1 + (c + 3u * parts) * quads + q] * mean_of(n, c + 3u * parts);
      }
      for (; c < pc.channels; c += parts) a0 += weights[w1 + c * quads + q] * mean_of(n, c);
    }
    partial4[tid] = (a0 + a1) + (a2 + a3);
    barrier();
    if (tid < quads) {
      vec4 sum = weights[b1 + tid];
      for (uint part = 0u; part < parts; ++part) sum += partial4[part * quads + tid];
      hidden[tid] = vec4(apply_epilogue(pc.ops1, p1, sum.x), apply_epilogue(pc.ops1, p1, sum.y),
                         apply_epilogue(pc.ops1, p1, sum.z), apply_epilogue(pc.ops1, p1, sum.w));
    }
    barrier();
  }

  // The gates of this chunk's channels: `lanes` invocations per channel
  // (a power of two), each summing every lanes-th quad of its row.
  const vec4 p2 = vec4(pc.p2_0, pc.p2_1, pc.p2_2, pc.p2_3);
  // Gate k is channel (c_first + k) % channels.
  const uint c_first = kNhwc ? first % pc.channels : first / pc.plane;
  const uint c_count = kNhwc ? min(end - first, pc.channels) : (end - 1u) / pc.plane - c_first + 1u;
  uint lanes = 1u;
  while (lanes * 2u * c_count <= 256u && lanes < quads) lanes *= 2u;
  const uint per_round = 256u / lanes;
  for (uint k0 = 0u; k0 < c_count; k0 += per_round) {
    const uint k = k0 + tid / lanes;
    const uint lane = tid % lanes;
    float acc = 0.0;
    if (k < c_count) {
      const uint row = w2 + (c_first + k) % pc.channels * quads;
      float acc1 = 0.0;
      uint q = lane;
      for (; q + lanes < quads; q += 2u * lanes) {
        acc += dot(weights[row + q], hidden[q]);
        acc1 += dot(weights[row + q + lanes], hidden[q + lanes]);
      }
      if (q < quads) acc += dot(weights[row + q], hidden[q]);
      acc += acc1;
    }
    partial[tid] = acc;
    barrier();
    if (lane == 0u && k < c_count) {
      const uint c = (c_first + k) % pc.channels;
      float sum = weights[b2 + c / 4u][c % 4u];
      for (uint l = 0u; l < lanes; ++l) sum += partial[tid + l];
      gate[k] = apply_epilogue(pc.ops2, p2, sum);
    }
    barrier();
  }

  const uint base = n * image_size;
  for (uint e = first + tid; e < end; e += 256u) {
    const uint k = kNhwc ? (e % pc.channels + pc.channels - c_first) % pc.channels : e / pc.plane - c_first;
    STORE(3, y, base + e, LOAD(0, x, base + e) * gate[k]);
  }
}
