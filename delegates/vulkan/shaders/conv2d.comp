#version 450
#extension GL_GOOGLE_include_directive : require
// 2-D convolution (NCHW, grouped, strided, padded, dilated) as an implicit
// GEMM per group: Y[oc, pixel] = sum over k = (c, kh, kw) of W[oc, k] *
// X[patch(pixel), k], where the pixels of all images form one dimension.
// Each workgroup of 256 invocations computes 64 output channels x 64
// pixels, each invocation 4x4, walking K in steps of 16 through shared
// memory; the input patches are gathered on the fly (no im2col buffer).
// Weights are pre-arranged on the host as [group][k][channel of group] so
// the weight tile loads are contiguous, and each k's place in the window
// comes from a host-made table, so gathering does no integer division.
// Epilogue: bias, fused ops.
// Push constants: ConvPush in delegates/vulkan/kernel_params.h.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
layout(set = 0, binding = 1) readonly restrict buffer W { float w[]; };
layout(set = 0, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
// Per k = (c, kh, kw) of a group: x = c*H*W + kh*dh*W + kw*dw, the input
// offset from the window's origin; y = kh*dh | (kw*dw) << 16.
layout(set = 0, binding = 4) readonly restrict buffer Taps { uvec2 taps[]; };

layout(push_constant) uniform Push {
  uint batch, channels, in_h, in_w;
  uint out_channels, out_h, out_w;
  uint group_channels, group_out;
  uint kernel_h, kernel_w, stride_h, stride_w;
  uint dilation_h, dilation_w, pad_top, pad_left;
  uint has_bias;
  uint epilogue_ops;
  // Scalars, not a vec4: a vec4 would be aligned to 16 bytes in the block.
  float epilogue_p0, epilogue_p1, epilogue_p2, epilogue_p3;
} pc;

const uint kTile = 64u;
const uint kTileK = 16u;

shared float w_tile[kTileK][kTile];
shared float x_tile[kTileK][kTile];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint tx = tid % 16u;
  const uint ty = tid / 16u;
  const uint group = gl_WorkGroupID.z;
  const uint pixel0 = gl_WorkGroupID.x * kTile;
  const uint oc0 = gl_WorkGroupID.y * kTile;
  const uint plane = pc.out_h * pc.out_w;
  const uint pixels = pc.batch * plane;
  const uint k_total = pc.group_channels * pc.kernel_h * pc.kernel_w;

  // Every load of the input tile by this invocation is for the same pixel
  // (column tid % 64); only its row of K changes.
  const uint my_pixel = pixel0 + tid % kTile;
  const bool pixel_valid = my_pixel < pixels;
  const uint n = my_pixel / plane;
  const uint ohw = my_pixel % plane;
  const int ih0 = int(ohw / pc.out_w * pc.stride_h) - int(pc.pad_top);
  const int iw0 = int(ohw % pc.out_w * pc.stride_w) - int(pc.pad_left);
  // Where the window's origin would be; it may lie in the padding, so the
  // sum is only formed for taps inside the input.
  const uint x_base = (n * pc.channels + group * pc.group_channels) * pc.in_h * pc.in_w;
  const int x_origin = int(x_base) + ih0 * int(pc.in_w) + iw0;
  const uint w_base = group * k_total * pc.group_out;

  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < k_total; k0 += kTileK) {
    for (uint s = 0u; s < 4u; ++s) {
      const uint e = tid + s * 256u;
      const uint kk = e / kTile;
      const uint col = e % kTile;
      const uint k = k0 + kk;
      const uint oc = oc0 + col;
      w_tile[kk][col] = (k < k_total && oc < pc.group_out) ? w[w_base + k * pc.group_out + oc] : 0.0;
      float v = 0.0;
      if (k < k_total && pixel_valid) {
        const uvec2 tap = taps[k];
        const int ih = ih0 + int(tap.y & 0xFFFFu);
        const int iw = iw0 + int(tap.y >> 16);
        if (ih >= 0 && ih < int(pc.in_h) && iw >= 0 && iw < int(pc.in_w)) v = x[x_origin + int(tap.x)];
      }
      x_tile[kk][col] = v;
    }
    barrier();
    for (uint kk = 0u; kk < kTileK; ++kk) {
      float wv[4];
      float xv[4];
      for (uint i = 0u; i < 4u; ++i) wv[i] = w_tile[kk][ty + 16u * i];
      for (uint j = 0u; j < 4u; ++j) xv[j] = x_tile[kk][tx + 16u * j];
      for (uint i = 0u; i < 4u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] = fma(wv[i], xv[j], acc[i][j]);
    }
    barrier();
  }

  for (uint j = 0u; j < 4u; ++j) {
    const uint pixel = pixel0 + tx + 16u * j;
    if (pixel >= pixels) continue;
    const uint out_n = pixel / plane;
    const uint out_hw = pixel % plane;
    for (uint i = 0u; i < 4u; ++i) {
      const uint oc = oc0 + ty + 16u * i;
      if (oc >= pc.group_out) continue;
      const uint channel = group * pc.group_out + oc;
      float v = acc[i][j];
      if (pc.has_bias != 0u) v += bias[channel];
      y[(out_n * pc.out_channels + channel) * plane + out_hw] = apply_epilogue(pc.epilogue_ops, vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3), v);
    }
  }
}
