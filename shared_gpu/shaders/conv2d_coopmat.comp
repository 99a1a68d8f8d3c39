#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
// 2-D convolution as conv2d.comp computes it (NCHW or NHWC, grouped,
// strided, padded, dilated; an implicit GEMM per group, same bindings, push
// constants, weight arrangement, tap table and split-K), with the
// multiplies on the tensor cores: `precision: fp16` in a profile.
//
// Each stage's weight and input tiles (kStageSteps K steps of 16, one
// barrier) are
// loaded from the f32 buffers as in conv2d.comp, rounded to f16 into shared
// memory, and multiplied there by
// VK_NV_cooperative_matrix subgroup products (f16 x f16 + f32 -> f32), so
// accumulation stays f32 and only the operands lose precision. Storage
// between kernels stays f32: the rest of the island is unchanged.
//
// A workgroup of 256 invocations (256 / subgroup size subgroups) computes a
// tile of 16*kThreadM output channels x 16*kThreadN pixels. Subgroups form
// a kWarpsM x kWarpsN grid over the tile; each holds kFragsM x kFragsN
// accumulator fragments of kFragM x kFragN (the device's reported shape,
// delegates/vulkan/lowering.cc picks it). Shared tiles are stored k-major,
// which makes the weight tile (channels x k) a column-major A and the input
// tile (k x pixels) a row-major B. At the end each subgroup stores one
// fragment at a time into its own staging block and its invocations apply
// bias and epilogue (or write partial sums) from there.
#include "gpu_ops.glsl"
#include "half_io.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint kThreadM = 4u;  // tile channels / 16: 4 or 8
layout(constant_id = 1) const uint kThreadN = 4u;  // tile pixels / 16: 4 or 8
layout(constant_id = 2) const uint kSplits = 1u;
layout(constant_id = 3) const uint kEpilogueOps = 0u;
layout(constant_id = 4) const bool kTapMajor = false;
// X and Y are NHWC (conv2d.comp's kNhwc; loads here stay one element per
// invocation in either layout).
layout(constant_id = 5) const bool kNhwc = false;
// The subgroup grid over the tile: kWarpsM * kWarpsN = 256 / subgroup size.
layout(constant_id = 6) const uint kWarpsM = 2u;
layout(constant_id = 7) const uint kWarpsN = 4u;
// The cooperative-matrix shape: kFragK divides 16; kFragM and kFragN
// divide the subgroup's share of the tile.
layout(constant_id = 8) const uint kFragM = 16u;
layout(constant_id = 9) const uint kFragN = 16u;
layout(constant_id = 10) const uint kFragK = 16u;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer W { vec4 w[]; };
layout(set = 0, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
HALF_OUT(3, YH, y)
layout(set = 0, binding = 4) readonly restrict buffer Taps { uvec2 taps[]; };
layout(set = 0, binding = 5) readonly restrict buffer Residual { float residual[]; };  // as conv2d.comp's
HALF_IN(5, ResidualH, residual)

layout(push_constant) uniform Push {
  uint batch, channels, in_h, in_w;
  uint out_channels, out_h, out_w;
  uint group_channels, group_out;
  uint kernel_h, kernel_w, stride_h, stride_w;
  uint dilation_h, dilation_w, pad_top, pad_left;
  uint has_bias;
  uint epilogue_ops;
  float epilogue_p0, epilogue_p1, epilogue_p2, epilogue_p3;
  uint has_residual;
} pc;

const uint kTileK = 16u;
// K steps (of 16) loaded per barrier. Two (one barrier per 32 k) measured
// slower on an H100 than one: 0.081 against 0.020 ms for 1x512x7x7 and
// 0.023 against 0.020 for 1x64x56x56, 0.165 against 0.176 for 1x256x56x56
// (the stage's registers, indexed by a loop variable, likely spill).
const uint kStageSteps = 1u;
const uint kStageK = kTileK * kStageSteps;
const uint kTileM = kThreadM * 16u;
const uint kTileN = kThreadN * 16u;
const uint kQuadsM = kThreadM * 4u;
const uint kRowsPerPass = 256u / kTileN;
const uint kWeightLoads = kThreadM / 4u;
const uint kInputLoads = kThreadN;
const uint kFragsM = kTileM / kWarpsM / kFragM;
const uint kFragsN = kTileN / kWarpsN / kFragN;
const uint kSubgroups = kWarpsM * kWarpsN;
const uint kFragSize = kFragM * kFragN;

// Shared rows are 8 halves (16 bytes) longer than a tile row, so the 16
// rows a fragment load reads start on different banks; fragment offsets
// stay 16-byte aligned.
const uint kRowM = kTileM + 8u;
const uint kRowN = kTileN + 8u;
// [buffer][k][channel] and [buffer][k][pixel].
shared float16_t w_tile[2 * kStageK * kRowM];
shared float16_t x_tile[2 * kStageK * kRowN];
// One fragment per subgroup on its way out.
shared float staging[kSubgroups * kFragSize];

uint tid;
uint w_base;
uint w_row;
uint quad0;
uint k_total;
uint my_column;
uint my_row;
bool pixel_valid;
int ih0, iw0;
int x_origin;
// Element strides of X: one channel, one input row, one column.
uint channel_stride;
uint row_stride;
uint column_stride;
uint next_kh, next_kw, next_c0;

vec4 w_next[kStageSteps][kWeightLoads];
float x_next[kStageSteps][kInputLoads];

// As conv2d.comp's load_step, into the registers of the stage's step t.
void load_step(uint step, uint t) {
  const uint k0 = step * kTileK;
  [[unroll]] for (uint s = 0u; s < kWeightLoads; ++s) {
    const uint e = tid + s * 256u;
    w_next[t][s] = w[w_base + (k0 + e / kQuadsM) * w_row + quad0 + e % kQuadsM];
  }
  if (kTapMajor) {
    const int ih = ih0 + int(next_kh * pc.dilation_h);
    const int iw = iw0 + int(next_kw * pc.dilation_w);
    const bool inside = pixel_valid && uint(ih) < pc.in_h && uint(iw) < pc.in_w;
    const int base = x_origin + int((next_kh * pc.dilation_h) * row_stride + next_kw * pc.dilation_w * column_stride +
                                    (next_c0 + my_row) * channel_stride);
    [[unroll]] for (uint s = 0u; s < kInputLoads; ++s) {
      x_next[t][s] = 0.0;
      if (inside) x_next[t][s] = LOAD(0, x, base + int(s * kRowsPerPass * channel_stride));
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
    [[unroll]] for (uint s = 0u; s < kInputLoads; ++s) {
      const uint k = k0 + my_row + s * kRowsPerPass;
      float v = 0.0;
      if (k < k_total && pixel_valid) {
        const uvec2 tap = taps[k];
        const int ih = ih0 + int(tap.y & 0xFFFFu);
        const int iw = iw0 + int(tap.y >> 16);
        if (uint(ih) < pc.in_h && uint(iw) < pc.in_w) v = LOAD(0, x, x_origin + int(tap.x));
      }
      x_next[t][s] = v;
    }
  }
}

// The stage of steps first.. (kStageSteps of them); steps at or past `end`
// (the slice's last) load zeros, which add nothing.
void load_stage(uint first, uint end) {
  [[unroll]] for (uint t = 0u; t < kStageSteps; ++t) {
    if (first + t < end) {
      load_step(first + t, t);
    } else {
      [[unroll]] for (uint s = 0u; s < kWeightLoads; ++s) w_next[t][s] = vec4(0.0);
      [[unroll]] for (uint s = 0u; s < kInputLoads; ++s) x_next[t][s] = 0.0;
    }
  }
}

// The registers of load_stage, rounded to f16, into buffer `buf`.
void store_stage(uint buf) {
  [[unroll]] for (uint t = 0u; t < kStageSteps; ++t) {
    const uint row0 = buf * kStageK + t * kTileK;
    [[unroll]] for (uint s = 0u; s < kWeightLoads; ++s) {
      const uint e = tid + s * 256u;
      const uint base = (row0 + e / kQuadsM) * kRowM + 4u * (e % kQuadsM);
      w_tile[base] = float16_t(w_next[t][s].x);
      w_tile[base + 1u] = float16_t(w_next[t][s].y);
      w_tile[base + 2u] = float16_t(w_next[t][s].z);
      w_tile[base + 3u] = float16_t(w_next[t][s].w);
    }
    [[unroll]] for (uint s = 0u; s < kInputLoads; ++s)
      x_tile[(row0 + my_row + s * kRowsPerPass) * kRowN + my_column] = float16_t(x_next[t][s]);
  }
}

#include "conv_finish.glsl"

void main() {
  tid = gl_LocalInvocationIndex;
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
  if (kTapMajor) {
    const uint tap = step_begin * kTileK / pc.group_channels;
    next_c0 = step_begin * kTileK - tap * pc.group_channels;
    next_kh = tap / pc.kernel_w;
    next_kw = tap % pc.kernel_w;
  }

  const uint warp = gl_SubgroupID;
  const uint warp_m = warp % kWarpsM;
  const uint warp_n = warp / kWarpsM;
  // The subgroup's first channel and pixel within the tile.
  const uint sub_m = warp_m * kFragsM * kFragM;
  const uint sub_n = warp_n * kFragsN * kFragN;

  fcoopmatNV<32, gl_ScopeSubgroup, kFragM, kFragN> acc[kFragsM * kFragsN];
  [[unroll]] for (uint i = 0u; i < kFragsM * kFragsN; ++i) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, kFragM, kFragN>(0.0);

  if (step_begin < step_end) {
    load_stage(step_begin, step_end);
    store_stage(0u);
  }
  barrier();
  uint buf = 0u;
  for (uint step = step_begin; step < step_end; step += kStageSteps) {
    // The next stage's loads are in flight during this stage's products;
    // they go to the other buffer, which every invocation finished reading
    // before the last barrier.
    const bool more = step + kStageSteps < step_end;
    if (more) load_stage(step + kStageSteps, step_end);
    [[unroll]] for (uint kk = 0u; kk < kStageK; kk += kFragK) {
      fcoopmatNV<16, gl_ScopeSubgroup, kFragM, kFragK> a[kFragsM];
      fcoopmatNV<16, gl_ScopeSubgroup, kFragK, kFragN> b[kFragsN];
      [[unroll]] for (uint i = 0u; i < kFragsM; ++i)
        coopMatLoadNV(a[i], w_tile, (buf * kStageK + kk) * kRowM + sub_m + i * kFragM, kRowM, true);
      [[unroll]] for (uint j = 0u; j < kFragsN; ++j)
        coopMatLoadNV(b[j], x_tile, (buf * kStageK + kk) * kRowN + sub_n + j * kFragN, kRowN, false);
      [[unroll]] for (uint i = 0u; i < kFragsM; ++i)
        [[unroll]] for (uint j = 0u; j < kFragsN; ++j) acc[i * kFragsN + j] = coopMatMulAddNV(a[i], b[j], acc[i * kFragsN + j]);
    }
    if (more) store_stage(buf ^ 1u);
    barrier();
    buf ^= 1u;
  }

  const uint y_total = pixels * pc.out_channels;
  const vec4 p = vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3);
  const uint stage = warp * kFragSize;
  [[unroll]] for (uint i = 0u; i < kFragsM; ++i) {
    [[unroll]] for (uint j = 0u; j < kFragsN; ++j) {
      // Row r of the fragment is channel r, column c pixel c: row-major.
      coopMatStoreNV(acc[i * kFragsN + j], staging, stage, kFragN, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = gl_SubgroupInvocationID; e < kFragSize; e += gl_SubgroupSize) {
        const uint oc = 4u * quad0 + sub_m + i * kFragM + e / kFragN;
        const uint pixel = pixel0 + sub_n + j * kFragN + e % kFragN;
        if (oc >= pc.group_out || pixel >= pixels) continue;
        const uint channel = group * pc.group_out + oc;
        const uint index =
            kNhwc ? pixel * pc.out_channels + channel : (pixel / plane * pc.out_channels + channel) * plane + pixel % plane;
        const float v = staging[stage + e];
        if (kSplits == 1u) {
          STORE(3, y, index, finish(v, channel, index, p));
        } else {
          STORE(3, y, slice * y_total + index, v);
        }
      }
      // Every invocation has read the block before the next fragment overwrites it.
      subgroupBarrier();
    }
  }
}
