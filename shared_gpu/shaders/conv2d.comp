#version 450
#extension GL_GOOGLE_include_directive : require
// 2-D convolution (NCHW or NHWC, grouped, strided, padded, dilated) as an
// implicit GEMM per group: Y[oc, pixel] = sum over k = (c, kh, kw) of W[oc, k] *
// X[patch(pixel), k], where the pixels of all images form one dimension.
//
// Each workgroup of 256 invocations (16 x 16) computes a tile of
// 16*kThreadM output channels x 16*kThreadN pixels, each invocation
// kThreadM x kThreadN of them, walking K in steps of 16 through two
// shared-memory buffers: the next step's loads are issued before the
// current step's arithmetic, so one barrier per step suffices. An
// invocation's channels and pixels lie in runs of 4, so every shared read
// is a vec4 and feeds 4 (or 16) FMAs.
//
// The input patches are gathered on the fly (no im2col buffer), without
// integer division: tap-major K (kTapMajor) walks taps and channels by
// counting; otherwise each k's place in the window comes from a host-made
// table. Weights are pre-arranged on the host as [group][k rounded up to
// 16][channel of group rounded up to the tile], zero padded, so the weight
// tile loads are contiguous vec4s without bounds checks.
//
// Split-K: with kSplits > 1, workgroup z = group * kSplits + slice sums one
// slice of the K steps and writes its raw partial sums, laid out like Y,
// to slice's part of binding 3; conv2d_reduce.comp adds the slices, the
// bias and the epilogue. With kSplits == 1 the epilogue happens here.
// Both GPU engines run it: the Vulkan delegate on NCHW tensors, the VGF
// runtime on NHWC ones (kNhwc); the layout changes the strides of X and Y,
// the host-made tap table and, for tap-major K in NHWC, how the input tile
// is loaded: there a step's 16 k are 16 channels adjacent in memory, so each
// invocation loads 4 of them as one vec4 (a warp reads whole 64-byte runs
// of 8 pixels) where NCHW invocations load one pixel each of a channel row.
// Push constants: ConvPush in shared_gpu/conv_kernel.h; the specialisation:
// ConvSpecialization there.
#include "gpu_ops.glsl"
#include "half_io.glsl"

layout(local_size_x = 256) in;

// Multiples of 4: 4 or 8 make 64- or 128-wide tiles.
layout(constant_id = 0) const uint kThreadM = 4u;  // output channels per invocation
layout(constant_id = 1) const uint kThreadN = 4u;  // pixels per invocation
layout(constant_id = 2) const uint kSplits = 1u;
// The epilogue's ops (apply_epilogue's `ops`), fixed per pipeline: with the
// switch over every op inlined for each of an invocation's outputs, an
// H200's compiler spilled the accumulators and the conv ran 6x slower.
layout(constant_id = 3) const uint kEpilogueOps = 0u;
// Whether K runs tap-major, k = (kh * kernel_w + kw) * group_channels + c,
// with group_channels a multiple of 16: then each step's 16 k share one
// tap, so an invocation checks the window bounds once per step and walks
// channels by address alone. Otherwise K runs channel-major through the
// tap table, k = (c * kernel_h + kh) * kernel_w + kw. The host arranges
// the weights in the same order.
layout(constant_id = 4) const bool kTapMajor = false;
// X and Y are NHWC ([n][h][w][c]) instead of NCHW. The weights and the tap
// table are arranged by the host to match (shared_gpu/conv_kernel.h).
layout(constant_id = 5) const bool kNhwc = false;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
// The same buffer as vec4s, for NHWC tap-major loads: every such load starts
// at a multiple of 4 floats (the channels are a multiple of 16).
layout(set = 0, binding = 0) readonly restrict buffer X4 { vec4 x4[]; };
HALF_IN(0, XH, x)
HALF_IN4(0, XH4, x)
layout(set = 0, binding = 1) readonly restrict buffer W { vec4 w[]; };
layout(set = 0, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
// The same buffer as vec4s: in NHWC an invocation's 4 channels of a pixel
// are adjacent, and go out as one store when the channels of a group are a
// multiple of 4 (each element is still written once, by one of the two).
layout(set = 0, binding = 3) writeonly restrict buffer Y4 { vec4 y4[]; };
HALF_OUT(3, YH, y)
HALF_OUT4(3, YH4, y)
// Channel-major K only (else any buffer stands in): per k of a group, x =
// the input offset of its (c, kh, kw) from the window's origin (NCHW:
// c*H*W + kh*dh*W + kw*dw; NHWC: (kh*dh*W + kw*dw)*C + c); y = kh*dh |
// (kw*dw) << 16.
layout(set = 0, binding = 4) readonly restrict buffer Taps { uvec2 taps[]; };
// A tensor of Y's shape and layout added to it before the epilogue ops
// (ConvPush::has_residual; else any buffer stands in, unread).
layout(set = 0, binding = 5) readonly restrict buffer Residual { float residual[]; };
HALF_IN(5, ResidualH, residual)

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
  uint has_residual;
} pc;

const uint kTileK = 16u;
const uint kQuadsM = kThreadM * 4u;  // vec4s across the tile's channels (16 * kThreadM / 4)
const uint kQuadsN = kThreadN * 4u;
const uint kTileN = kThreadN * 16u;
// Input-tile rows that one pass of the workgroup loads (one pixel each).
const uint kRowsPerPass = 256u / kTileN;
// Weight-tile vec4s and input-tile elements each invocation loads per step.
const uint kWeightLoads = kThreadM / 4u;
const uint kInputLoads = kThreadN;
// NHWC tap-major: vec4 loads per invocation, each of its own pixel (a pass
// of the workgroup covers 64 pixels x 16 channels).
const uint kQuadLoads = kThreadN / 4u;
const bool kChannelQuads = kNhwc && kTapMajor;

shared vec4 w_tile[2][kTileK][kQuadsM];
// NHWC tap-major stores 4 rows of one column per invocation: a row padded
// by one vec4 keeps those stores to 2-way bank conflicts.
shared vec4 x_tile[2][kTileK][kQuadsN + (kChannelQuads ? 1u : 0u)];

// What one step's global loads need, set once at the start of main().
uint tid;
uint w_base;    // the group's padded weight matrix, in vec4s
uint w_row;     // its row length, in vec4s
uint quad0;     // the tile's first channel / 4
uint k_total;
// Every input load of an invocation is for the same pixel (column
// tid % kTileN of the tile); only its row of K changes.
uint my_column;
uint my_row;
bool pixel_valid;
int ih0, iw0;
// Where the pixel's window origin would be in X; it may lie in the
// padding, so the sum is only formed for taps inside the input.
int x_origin;
// Element strides of X: one channel, one input row.
uint channel_stride;
uint row_stride;
uint column_stride;
// Tap-major: the tap and first channel of the next step load_step reads
// (steps are loaded in order).
uint next_kh, next_kw, next_c0;

// One step's loads, held in registers from before the previous step's
// arithmetic until after it.
vec4 w_next[kWeightLoads];
float x_next[kInputLoads];
// NHWC tap-major: the invocation's 4 channels (my_quad) of pass s's pixel
// (my_column + 64 s), that pixel's window origin (ih0 is far negative for a
// pixel past the end, which no tap brings inside) and its offset in X.
uint my_quad;
int pass_ih0[kQuadLoads];
int pass_iw0[kQuadLoads];
int pass_origin[kQuadLoads];
vec4 quad_next[kQuadLoads];

void load_step(uint step) {
  const uint k0 = step * kTileK;
  for (uint s = 0u; s < kWeightLoads; ++s) {
    const uint e = tid + s * 256u;
    w_next[s] = w[w_base + (k0 + e / kQuadsM) * w_row + quad0 + e % kQuadsM];
  }
  if (kChannelQuads) {
    const int dh = int(next_kh * pc.dilation_h);
    const int dw = int(next_kw * pc.dilation_w);
    const int tap_offset = dh * int(row_stride) + dw * int(column_stride) + int(next_c0 + 4u * my_quad);
    for (uint s = 0u; s < kQuadLoads; ++s) {
      quad_next[s] = vec4(0.0);
      if (uint(pass_ih0[s] + dh) < pc.in_h && uint(pass_iw0[s] + dw) < pc.in_w)
        quad_next[s] = LOAD4(0, x, uint(pass_origin[s] + tap_offset) >> 2);
    }
    next_c0 += kTileK;
    if (next_c0 == pc.group_channels) {
      next_c0 = 0u;
      if (++next_kw == pc.kernel_w) {
        next_kw = 0u;
        ++next_kh;
      }
    }
  } else if (kTapMajor) {
    const int ih = ih0 + int(next_kh * pc.dilation_h);
    const int iw = iw0 + int(next_kw * pc.dilation_w);
    const bool inside = pixel_valid && uint(ih) < pc.in_h && uint(iw) < pc.in_w;
    const int base = x_origin + int((next_kh * pc.dilation_h) * row_stride + next_kw * pc.dilation_w * column_stride +
                                    (next_c0 + my_row) * channel_stride);
    for (uint s = 0u; s < kInputLoads; ++s) {
      x_next[s] = 0.0;
      if (inside) x_next[s] = LOAD(0, x, base + int(s * kRowsPerPass * channel_stride));
    }
    next_c0 += kTileK;
    if (next_c0 == pc.group_channels) {
      next_c0 = 0u;
      if (++next_kw == pc.kernel_w) {
        next_kw = 0u;
        ++next_kh;
      }
    }
  } else {
    for (uint s = 0u; s < kInputLoads; ++s) {
      const uint k = k0 + my_row + s * kRowsPerPass;
      float v = 0.0;
      if (k < k_total && pixel_valid) {
        const uvec2 tap = taps[k];
        const int ih = ih0 + int(tap.y & 0xFFFFu);
        const int iw = iw0 + int(tap.y >> 16);
        if (uint(ih) < pc.in_h && uint(iw) < pc.in_w) v = LOAD(0, x, x_origin + int(tap.x));
      }
      x_next[s] = v;
    }
  }
}

void store_step(uint buf) {
  for (uint s = 0u; s < kWeightLoads; ++s) {
    const uint e = tid + s * 256u;
    w_tile[buf][e / kQuadsM][e % kQuadsM] = w_next[s];
  }
  if (kChannelQuads) {
    for (uint s = 0u; s < kQuadLoads; ++s) {
      const uint column = my_column + 64u * s;
      for (uint j = 0u; j < 4u; ++j) x_tile[buf][4u * my_quad + j][column / 4u][column % 4u] = quad_next[s][j];
    }
    return;
  }
  for (uint s = 0u; s < kInputLoads; ++s) x_tile[buf][my_row + s * kRowsPerPass][my_column / 4u][my_column % 4u] = x_next[s];
}

#include "conv_finish.glsl"

void main() {
  tid = gl_LocalInvocationIndex;
  const uint tx = tid % 16u;
  const uint ty = tid / 16u;
  const uint group = gl_WorkGroupID.z / kSplits;
  const uint slice = gl_WorkGroupID.z % kSplits;
  const uint pixel0 = gl_WorkGroupID.x * kTileN;
  quad0 = gl_WorkGroupID.y * kQuadsM;
  const uint plane = pc.out_h * pc.out_w;
  const uint pixels = pc.batch * plane;
  k_total = pc.group_channels * pc.kernel_h * pc.kernel_w;
  const uint k_steps = (k_total + kTileK - 1u) / kTileK;
  const uint steps_per_slice = (k_steps + kSplits - 1u) / kSplits;
  const uint step_begin = min(slice * steps_per_slice, k_steps);
  const uint step_end = min(step_begin + steps_per_slice, k_steps);
  w_row = gl_NumWorkGroups.y * kQuadsM;
  w_base = group * k_steps * kTileK * w_row;

  my_column = tid % kTileN;
  my_row = tid / kTileN;
  const uint my_pixel = pixel0 + my_column;
  pixel_valid = my_pixel < pixels;
  const uint n = my_pixel / plane;
  const uint ohw = my_pixel % plane;
  ih0 = int(ohw / pc.out_w * pc.stride_h) - int(pc.pad_top);
  iw0 = int(ohw % pc.out_w * pc.stride_w) - int(pc.pad_left);
  const uint in_plane = pc.in_h * pc.in_w;
  channel_stride = kNhwc ? 1u : in_plane;
  column_stride = kNhwc ? pc.channels : 1u;
  row_stride = pc.in_w * column_stride;
  x_origin = int(n * pc.channels * in_plane + group * pc.group_channels * channel_stride) + ih0 * int(row_stride) +
             iw0 * int(column_stride);
  if (kChannelQuads) {
    my_quad = tid % 4u;
    my_column = tid / 4u;
    for (uint s = 0u; s < kQuadLoads; ++s) {
      const uint pixel = pixel0 + my_column + 64u * s;
      const uint pn = pixel / plane;
      const uint phw = pixel % plane;
      pass_ih0[s] = pixel < pixels ? int(phw / pc.out_w * pc.stride_h) - int(pc.pad_top) : -65536;
      pass_iw0[s] = int(phw % pc.out_w * pc.stride_w) - int(pc.pad_left);
      pass_origin[s] = int(pn * pc.channels * in_plane + group * pc.group_channels) + pass_ih0[s] * int(row_stride) +
                       pass_iw0[s] * int(column_stride);
    }
  }
  if (kTapMajor) {
    const uint tap = step_begin * kTileK / pc.group_channels;
    next_c0 = step_begin * kTileK - tap * pc.group_channels;
    next_kh = tap / pc.kernel_w;
    next_kw = tap % pc.kernel_w;
  }

  vec4 acc[kThreadM][kThreadN / 4u];
  for (uint i = 0u; i < kThreadM; ++i)
    for (uint j = 0u; j < kThreadN / 4u; ++j) acc[i][j] = vec4(0.0);

  if (step_begin < step_end) {
    load_step(step_begin);
    store_step(0u);
  }
  barrier();
  uint buf = 0u;
  for (uint step = step_begin; step < step_end; ++step) {
    // The next step's loads are in flight during this step's arithmetic;
    // they go to the other buffer, which every invocation finished reading
    // before the last barrier.
    const bool more = step + 1u < step_end;
    if (more) load_step(step + 1u);
    for (uint kk = 0u; kk < kTileK; ++kk) {
      vec4 a[kThreadM / 4u];
      vec4 b[kThreadN / 4u];
      for (uint i = 0u; i < kThreadM / 4u; ++i) a[i] = w_tile[buf][kk][ty + 16u * i];
      for (uint j = 0u; j < kThreadN / 4u; ++j) b[j] = x_tile[buf][kk][tx + 16u * j];
      for (uint i = 0u; i < kThreadM / 4u; ++i)
        for (uint r = 0u; r < 4u; ++r)
          for (uint j = 0u; j < kThreadN / 4u; ++j) acc[4u * i + r][j] = fma(vec4(a[i][r]), b[j], acc[4u * i + r][j]);
    }
    if (more) store_step(buf ^ 1u);
    barrier();
    buf ^= 1u;
  }

  // Invocation (tx, ty) holds channels 64i + 4ty + r and pixels 64j + 4tx + c
  // of the tile.
  const uint y_total = pixels * pc.out_channels;
  const vec4 p = vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3);
  for (uint j = 0u; j < kThreadN / 4u; ++j) {
    for (uint c = 0u; c < 4u; ++c) {
      const uint pixel = pixel0 + 64u * j + 4u * tx + c;
      if (pixel >= pixels) continue;
      const uint out_n = pixel / plane;
      const uint out_hw = pixel % plane;
      for (uint i = 0u; i < kThreadM / 4u; ++i) {
        const uint oc0 = 4u * (quad0 + 16u * i + ty);
        if (kNhwc && pc.group_out % 4u == 0u && oc0 < pc.group_out) {
          const uint channel0 = group * pc.group_out + oc0;
          const uint index = pixel * pc.out_channels + channel0;
          vec4 v = vec4(acc[4u * i][j][c], acc[4u * i + 1u][j][c], acc[4u * i + 2u][j][c], acc[4u * i + 3u][j][c]);
          if (kSplits == 1u) {
            for (uint r = 0u; r < 4u; ++r) v[r] = finish(v[r], channel0 + r, index + r, p);
            STORE4(3, y, index / 4u, v);
          } else {
            STORE4(3, y, (slice * y_total + index) / 4u, v);
          }
          continue;
        }
        for (uint r = 0u; r < 4u; ++r) {
          const uint oc = 4u * (quad0 + 16u * i + ty) + r;
          if (oc >= pc.group_out) continue;
          const uint channel = group * pc.group_out + oc;
          const uint index =
              kNhwc ? pixel * pc.out_channels + channel : (out_n * pc.out_channels + channel) * plane + out_hw;
          const float v = acc[4u * i + r][j][c];
          if (kSplits == 1u) {
            STORE(3, y, index, finish(v, channel, index, p));
          } else {
            STORE(3, y, slice * y_total + index, v);
          }
        }
      }
    }
  }
}
