#version 450
#extension GL_GOOGLE_include_directive : require
// A 1x1 expand conv and the depthwise conv that alone reads its output, in
// one dispatch (an inverted-residual block's first two convs: MobileNetV2/
// V3, EfficientNet, MnasNet), optionally with the spatial mean of the
// depthwise output (depthwise_mean.comp's). One workgroup makes one
// (image, depthwise output channel) plane: first the expand conv's channel
// it reads, over the whole input plane, into shared memory (kSlices
// invocations a pixel, each summing every kSlices-th k of the expand's K,
// the weights read alike by every invocation), then the depthwise conv from there, as
// depthwise_conv2d.comp computes a pixel. The expanded tensor never goes to
// memory, and the barrier between the two dispatches goes. The lowering
// keeps planes small (lowering.cc plan_expand_depthwise), runs 256
// invocations and splits K where the input plane has fewer pixels.
// Bindings: X [n][k][in pixel] (the expand's input), We [channel][k] and
// Be [channel] (the expand's weights and bias, BatchNorm folded), Wd [out
// channel][kh][kw] and Bd [out channel] (the depthwise conv's), Y, means
// [n][out channel] (read where pc.has_mean; else any buffer stands in).
#include "common.glsl"
#include "../../../shared_gpu/shaders/half_io.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint kGroupSize = 256u;  // a power of two
layout(constant_id = 1) const uint kSlices = 1u;       // a power of two, at most kGroupSize
const uint kMaxPlane = 784u;  // the host keeps the input plane within this

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer We { float we[]; };
layout(set = 0, binding = 2) readonly restrict buffer Be { float be[]; };
layout(set = 0, binding = 3) readonly restrict buffer Wd { float wd[]; };
layout(set = 0, binding = 4) readonly restrict buffer Bd { float bd[]; };
layout(set = 0, binding = 5) writeonly restrict buffer Y { float y[]; };
HALF_OUT(5, YH, y)
layout(set = 0, binding = 6) writeonly restrict buffer Means { float means[]; };
HALF_OUT(6, MeansH, means)

layout(push_constant) uniform Push {
  uint batch, channels, in_h, in_w;  // channels: the expand's outputs, the depthwise conv's inputs
  uint out_channels, out_h, out_w, group_out;
  uint kernel_h, kernel_w, stride_h, stride_w;
  uint dilation_h, dilation_w, pad_top, pad_left;
  uint k;  // the expand's input channels
  uint has_mean, expand_ops, depthwise_ops;
  // Scalars, not vec4s: a vec4 would be aligned to 16 bytes in the block.
  float e0, e1, e2, e3;
  float d0, d1, d2, d3;
} pc;

shared float expanded[kMaxPlane];
shared float sums[kGroupSize];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint plane_index = linear_group();  // n * out_channels + oc
  if (plane_index >= pc.batch * pc.out_channels) return;  // whole workgroups only
  const uint oc = plane_index % pc.out_channels;
  const uint n = plane_index / pc.out_channels;
  const uint c = oc / pc.group_out;  // the expanded channel it reads
  const uint in_plane = pc.in_h * pc.in_w;

  // The expand conv's channel c over the input plane: kGroupSize / kSlices
  // pixels at a time, each summed by kSlices invocations over every
  // kSlices-th k (four sums in flight each), then added in shared memory.
  const vec4 pe = vec4(pc.e0, pc.e1, pc.e2, pc.e3);
  const uint x_base = n * pc.k * in_plane;
  const uint w_base = c * pc.k;
  const uint slots = kGroupSize / kSlices;
  const uint slot = tid % slots, slice = tid / slots;
  for (uint p0 = 0u; p0 < in_plane; p0 += slots) {
    const uint p = p0 + slot;
    float a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    if (p < in_plane) {
      uint kk = slice;
      for (; kk + 3u * kSlices < pc.k; kk += 4u * kSlices) {
        a0 = fma(we[w_base + kk], LOAD(0, x, x_base + kk * in_plane + p), a0);
        a1 = fma(we[w_base + kk + kSlices], LOAD(0, x, x_base + (kk + kSlices) * in_plane + p), a1);
        a2 = fma(we[w_base + kk + 2u * kSlices], LOAD(0, x, x_base + (kk + 2u * kSlices) * in_plane + p), a2);
        a3 = fma(we[w_base + kk + 3u * kSlices], LOAD(0, x, x_base + (kk + 3u * kSlices) * in_plane + p), a3);
      }
      for (; kk < pc.k; kk += kSlices) a0 = fma(we[w_base + kk], LOAD(0, x, x_base + kk * in_plane + p), a0);
    }
    if (kSlices == 1u) {
      if (p < in_plane) expanded[p] = apply_epilogue(pc.expand_ops, pe, ((a0 + a1) + (a2 + a3)) + be[c]);
    } else {
      sums[tid] = (a0 + a1) + (a2 + a3);
      barrier();
      for (uint half_count = kSlices / 2u; half_count > 0u; half_count >>= 1u) {
        if (slice < half_count) sums[tid] += sums[tid + half_count * slots];
        barrier();
      }
      if (slice == 0u && p < in_plane) expanded[p] = apply_epilogue(pc.expand_ops, pe, sums[tid] + be[c]);
      barrier();
    }
  }
  barrier();

  // The depthwise conv of it.
  const uint plane = pc.out_h * pc.out_w;
  const uint wd_base = oc * pc.kernel_h * pc.kernel_w;
  const float bias = bd[oc];
  const vec4 pd = vec4(pc.d0, pc.d1, pc.d2, pc.d3);
  float total = 0.0;
  for (uint q = tid; q < plane; q += kGroupSize) {
    const uint oh = q / pc.out_w, ow = q % pc.out_w;
    const int ih0 = int(oh * pc.stride_h) - int(pc.pad_top);
    const int iw0 = int(ow * pc.stride_w) - int(pc.pad_left);
    float acc = 0.0;
    for (uint kh = 0u; kh < pc.kernel_h; ++kh) {
      const int ih = ih0 + int(kh * pc.dilation_h);
      if (ih < 0 || ih >= int(pc.in_h)) continue;
      for (uint kw = 0u; kw < pc.kernel_w; ++kw) {
        const int iw = iw0 + int(kw * pc.dilation_w);
        if (iw < 0 || iw >= int(pc.in_w)) continue;
        acc = fma(wd[wd_base + kh * pc.kernel_w + kw], expanded[uint(ih) * pc.in_w + uint(iw)], acc);
      }
    }
    const float v = apply_epilogue(pc.depthwise_ops, pd, acc + bias);
    STORE(5, y, plane_index * plane + q, v);
    total += v;
  }
  if (pc.has_mean == 0u) return;
  sums[tid] = total;
  barrier();
  for (uint half_size = kGroupSize / 2u; half_size > 0u; half_size >>= 1u) {
    if (tid < half_size) sums[tid] += sums[tid + half_size];
    barrier();
  }
  if (tid == 0u) STORE(6, means, plane_index, sums[0] / float(plane));
}
