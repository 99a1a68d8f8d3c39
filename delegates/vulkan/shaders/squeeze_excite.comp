#version 450
#extension GL_GOOGLE_include_directive : require
// A squeeze-and-excitation block's gate in one dispatch (MobileNetV3,
// EfficientNet, RegNetY, ...): s[n][c] = act2(b2[c] + sum_j W2[c][j] *
// act1(b1[j] + sum_c' W1[j][c'] * mean_hw(x[n][c']))), which the graph
// writes as GlobalAveragePool (or ReduceMean over H and W), a 1x1 conv to
// `squeeze` channels with its activation, and a 1x1 conv back with its gate
// (lowering.cc's plan_squeeze_excite). Three dispatches and their barriers
// become one; the Mul of x by s stays where it was.
//
// Every workgroup averages 8 planes (32 invocations a plane, reading it in
// order) into `means`; the last workgroup to finish (an atomic count, reset
// by that workgroup for the next run) then computes both small products
// from the means: 8 groups of 32 invocations each take one hidden unit's
// dot product over the channels (W1's rows are read in order), then every
// invocation one output channel's over the hidden units (W2 is stored
// transposed, so the invocations read it in order).
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
// W1 [squeeze][channels], b1 [squeeze], W2 transposed [squeeze][channels], b2 [channels].
layout(set = 0, binding = 1) readonly restrict buffer Weights { float weights[]; };
// Written by every workgroup, read by the last: coherent, so the last one
// reads them past any cache the others' writes did not reach.
layout(set = 0, binding = 2) coherent restrict buffer Means { float means[]; };
// counter[0]: workgroups finished in this run; 0 between runs.
layout(set = 0, binding = 3) coherent restrict buffer Counter { uint counter[]; };
layout(set = 0, binding = 4) writeonly restrict buffer Y { float y[]; };
HALF_OUT(4, YH, y)

layout(push_constant) uniform Push {
  uint batch, channels, squeeze, plane;
  uint ops1, ops2;  // the two products' epilogues (apply_epilogue's ops)
  // Scalars, not vec4s: a vec4 would be aligned to 16 bytes in the block.
  float p1_0, p1_1, p1_2, p1_3;
  float p2_0, p2_1, p2_2, p2_3;
} pc;

const uint kPlanesPerGroup = 8u;
// Hidden units the last workgroup keeps: batch * squeeze <= this (the host checks).
const uint kMaxHidden = 1024u;

shared float partial[256];
shared float hidden[kMaxHidden];
shared bool last;

// The sum of `v` over the 32 invocations of this invocation's group of 32,
// in lane 0 of the group (the others' result is unspecified).
float group_sum(uint tid, float v) {
  partial[tid] = v;
  barrier();
  for (uint stride = 16u; stride > 0u; stride >>= 1) {
    if ((tid & 31u) < stride) partial[tid] += partial[tid + stride];
    barrier();
  }
  return partial[tid];
}

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint lane = tid & 31u;
  const uint planes = pc.batch * pc.channels;
  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z;

  // Phase 1: this workgroup's planes.
  const uint plane_index = linear_group() * kPlanesPerGroup + tid / 32u;
  float sum = 0.0;
  if (plane_index < planes)
    for (uint i = lane; i < pc.plane; i += 32u) sum += LOAD(0, x, plane_index * pc.plane + i);
  sum = group_sum(tid, sum);
  if (lane == 0u && plane_index < planes) means[plane_index] = sum / float(pc.plane);

  memoryBarrierBuffer();
  barrier();
  if (tid == 0u) last = atomicAdd(counter[0], 1u) == groups - 1u;
  barrier();
  if (!last) return;
  memoryBarrierBuffer();

  // Phase 2, the last workgroup: hidden = act1(W1 * means + b1), per image.
  const uint w1 = 0u;
  const uint b1 = pc.squeeze * pc.channels;
  const uint w2 = b1 + pc.squeeze;
  const uint b2 = w2 + pc.squeeze * pc.channels;
  const vec4 p1 = vec4(pc.p1_0, pc.p1_1, pc.p1_2, pc.p1_3);
  const vec4 p2 = vec4(pc.p2_0, pc.p2_1, pc.p2_2, pc.p2_3);
  const uint units = pc.batch * pc.squeeze;
  // Every group of 32 runs the same number of rounds (group_sum's barriers).
  for (uint first = 0u; first < units; first += kPlanesPerGroup) {
    const uint unit = first + tid / 32u;
    const uint n = unit / pc.squeeze;
    const uint j = unit % pc.squeeze;
    float dot = 0.0;
    if (unit < units)
      for (uint c = lane; c < pc.channels; c += 32u) dot += weights[w1 + j * pc.channels + c] * means[n * pc.channels + c];
    dot = group_sum(tid, dot);
    if (lane == 0u && unit < units) hidden[unit] = apply_epilogue(pc.ops1, p1, dot + weights[b1 + j]);
  }
  barrier();
  // y = act2(W2 * hidden + b2).
  for (uint i = tid; i < planes; i += 256u) {
    const uint n = i / pc.channels;
    const uint c = i % pc.channels;
    float acc = weights[b2 + c];
    for (uint j = 0u; j < pc.squeeze; ++j) acc += weights[w2 + j * pc.channels + c] * hidden[n * pc.squeeze + j];
    STORE(4, y, i, apply_epilogue(pc.ops2, p2, acc));
  }
  if (tid == 0u) counter[0] = 0u;
}
