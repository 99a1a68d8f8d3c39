#version 450
#extension GL_GOOGLE_include_directive : require
// A small 1x1 conv (stride 1, no padding, one group; NCHW for the Vulkan
// delegate, NHWC for the VGF runtime: kNhwc) or linear layer
// (rows as images of one pixel) in one dispatch, for the batch-1 layers of
// MobileNet-style blocks that conv2d.comp's 64x64 tiles serve badly: a few
// hundred outputs per tile row, a few K steps, a barrier per step, and a
// second dispatch (conv2d_reduce) when K is split. Here each invocation
// makes 4 output channels of one pixel; `kSlices` invocations share those
// outputs, each summing every kSlices-th k (so K is split inside the
// workgroup), and add their sums in shared memory, in a fixed order, before
// the bias, the residual and the epilogue ops (as conv_finish.glsl).
// Adjacent invocations take adjacent pixels (coalesced X reads) and mostly
// the same channels (W reads broadcast; in NHWC a pixel's K are adjacent
// instead). shared_gpu/pointwise_kernel.h picks kSlices so the grid fills
// the GPU.
// Bindings: X [n][k][pixel] (NHWC [n][pixel][k]), W [k][out channel / 4]
// (vec4s, scaled by any folded BatchNorm, zero padded), bias [out channel],
// Y, residual (Y's shape and layout).
#include "gpu_ops.glsl"
#include "half_io.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint kSlices = 1u;  // a power of two, at most 256
layout(constant_id = 1) const bool kNhwc = false;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer W { vec4 w[]; };
layout(set = 0, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
HALF_OUT(3, YH, y)
layout(set = 0, binding = 4) readonly restrict buffer Residual { float residual[]; };
HALF_IN(4, ResidualH, residual)

layout(push_constant) uniform Push {
  uint batch, pixels, k, out_channels;  // pixels of one image
  uint quads;                           // ceil(out_channels / 4): W's row length
  uint has_bias, has_residual, epilogue_ops;
  // Scalars, not a vec4: a vec4 would be aligned to 16 bytes in the block.
  float epilogue_p0, epilogue_p1, epilogue_p2, epilogue_p3;
} pc;

shared vec4 sums[256];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint slots = 256u / kSlices;  // output quads per workgroup
  const uint slot = tid % slots, slice = tid / slots;
  const uint g = linear_group() * slots + slot;
  const uint all_pixels = pc.batch * pc.pixels;
  const bool live = g < all_pixels * pc.quads;
  const uint pixel = g % all_pixels, quad = g / all_pixels;
  const uint n = pixel / pc.pixels, p = pixel % pc.pixels;
  vec4 a0 = vec4(0.0), a1 = vec4(0.0);
  if (live) {
    // X's element k of this pixel is x_base + k * x_step.
    const uint x_base = kNhwc ? pixel * pc.k : n * pc.k * pc.pixels + p;
    const uint x_step = kNhwc ? 1u : pc.pixels;
    uint kk = slice;
    for (; kk + kSlices < pc.k; kk += 2u * kSlices) {
      a0 += w[kk * pc.quads + quad] * LOAD(0, x, x_base + kk * x_step);
      a1 += w[(kk + kSlices) * pc.quads + quad] * LOAD(0, x, x_base + (kk + kSlices) * x_step);
    }
    if (kk < pc.k) a0 += w[kk * pc.quads + quad] * LOAD(0, x, x_base + kk * x_step);
  }
  sums[tid] = a0 + a1;
  barrier();
  for (uint half_count = kSlices / 2u; half_count > 0u; half_count >>= 1u) {
    if (slice < half_count) sums[tid] += sums[tid + half_count * slots];
    barrier();
  }
  if (slice != 0u || !live) return;
  const vec4 v = sums[tid];
  const vec4 params = vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3);
  for (uint r = 0u; r < 4u; ++r) {
    const uint oc = quad * 4u + r;
    if (oc >= pc.out_channels) break;
    const uint index = kNhwc ? pixel * pc.out_channels + oc : (n * pc.out_channels + oc) * pc.pixels + p;
    float value = v[r];
    if (pc.has_bias != 0u) value += bias[oc];
    if (pc.has_residual != 0u) value += LOAD(4, residual, index);
    STORE(3, y, index, apply_epilogue(pc.epilogue_ops, params, value));
  }
}
