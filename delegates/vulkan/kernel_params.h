// The host side of the Vulkan delegate's shader interfaces: operation codes,
// push-constant structs and parameter-block layouts. Each struct mirrors the
// declaration in the shader named beside it (delegates/vulkan/shaders/); a
// change on one side must be made on the other. The op codes and the conv
// kernels' interfaces are shared with the VGF runtime (shared_gpu/).
#pragma once

#include <cstddef>
#include <cstdint>

#include "shared_gpu/conv_kernel.h"
#include "shared_gpu/gpu_op_codes.h"
#include "shared_gpu/pointwise_kernel.h"
#include "shared_gpu/se_kernel.h"

namespace hetsched::vulkan {

// The kernels both GPU engines run (shared_gpu/shaders/conv2d.comp and its
// kin) keep their interfaces in shared_gpu/.
using gpu::ConvPush;
using gpu::CoopMatConv;
using gpu::coopmat_specialization;
using gpu::ConvSpecialization;
using gpu::kConvGroupSize;
using gpu::kConvTileK;
using gpu::kFirstBinary;
using gpu::kMaxEpilogueOps;
using gpu::OpCode;
using gpu::PointwisePush;
using gpu::SeScalePush;

// Limits of the parameter blocks. kMaxRank bounds the rank of every tensor
// a generic kernel walks (after merging dims that are contiguous in every
// operand); kMaxOperands is the number of operand bindings of
// elementwise.comp; kMaxChainOps the length of its op list;
// kMaxEpilogueOps the ops a GEMM/conv epilogue packs into one word.
inline constexpr uint32_t kMaxRank = 8;
inline constexpr uint32_t kMaxOperands = 5;
inline constexpr uint32_t kMaxChainOps = 8;

// Workgroup sizes (local_size_x) and the outputs each invocation computes.
inline constexpr uint32_t kElementwiseGroupSize = 256;
inline constexpr uint32_t kElementwisePerThread = 4;
inline constexpr uint32_t kGemmTile = 64;           // gemm.comp: 64x64 outputs per workgroup
inline constexpr uint32_t kGenericGroupSize = 256;  // one output per invocation
// Workgroups per grid dimension that every device accepts
// (maxComputeWorkGroupCount's minimum in the Vulkan spec).
inline constexpr uint32_t kMaxGroupsPerDim = 65535;

// Parameter blocks in the island's parameter buffer, addressed by a word
// offset pushed as the only push constant (ParamsPush).
struct ParamsPush {
  uint32_t base;
};

// elementwise.comp. The chain's structure is specialised into the pipeline
// (so the shader compiles down to the loads and arithmetic of that chain);
// shapes, strides and op parameters come in a parameter block.
//
// Op words: code in bits 0-7, operand index in bits 8-15, bit 16 puts the
// chain value on the right of a binary op, bit 17 takes p0 as the other
// operand, bits 24-31 are Where's condition operand. Operand o reads
// binding 2 + o.
struct ElementwiseSpecialization {
  uint32_t operands;                // constant_id 0
  uint32_t contiguous_mask;         // constant_id 1; bit o: operand o is read at the output index
  uint32_t ops;                     // constant_id 2
  uint32_t op_words[kMaxChainOps];  // constant_id 3 + i
};
inline constexpr uint32_t kOpReversed = 1u << 16;
inline constexpr uint32_t kOpImmediate = 1u << 17;
inline constexpr uint32_t kOpConditionShift = 24;

struct ElementwiseParams {
  uint32_t total;
  uint32_t rank;
  uint32_t unused[6];
  uint32_t dims[kMaxRank];
  int32_t strides[kMaxOperands][kMaxRank];
  float op_params[kMaxChainOps][2];  // p0, p1 of each op
};
static_assert(offsetof(ElementwiseParams, dims) == 8 * 4);
static_assert(offsetof(ElementwiseParams, strides) == 16 * 4);
static_assert(offsetof(ElementwiseParams, op_params) == 56 * 4);

// reduce.comp.
struct ReduceParams {
  uint32_t outputs;
  uint32_t count;
  uint32_t kept_rank;
  uint32_t reduced_rank;
  float scale;  // 1 / count
  uint32_t unused[3];
  uint32_t kept_dims[kMaxRank];
  uint32_t kept_strides[kMaxRank];
  uint32_t reduced_dims[kMaxRank];
  uint32_t reduced_strides[kMaxRank];
};
static_assert(offsetof(ReduceParams, kept_dims) == 8 * 4);
static_assert(offsetof(ReduceParams, reduced_strides) == 32 * 4);

// strided_copy.comp.
struct CopyParams {
  uint32_t total;
  uint32_t rank;
  int32_t src_offset;
  int32_t dst_offset;
  uint32_t unused[4];
  uint32_t dims[kMaxRank];
  int32_t src_strides[kMaxRank];
  int32_t dst_strides[kMaxRank];
};
static_assert(offsetof(CopyParams, src_strides) == 16 * 4);
static_assert(offsetof(CopyParams, dst_strides) == 24 * 4);

// gather.comp.
struct GatherParams {
  uint32_t total;
  uint32_t rank;
  uint32_t axis_stride;
  uint32_t unused[5];
  uint32_t dims[kMaxRank];
  uint32_t data_strides[kMaxRank];
  uint32_t index_strides[kMaxRank];
};
static_assert(offsetof(GatherParams, data_strides) == 16 * 4);

// gemm.comp.
struct GemmPush {
  uint32_t m, n, k;
  int32_t a_row_stride, a_col_stride;
  int32_t b_row_stride, b_col_stride;
  int32_t c_row_stride, c_col_stride;
  uint32_t batch1, batch2;
  int32_t a_batch_stride[3];
  int32_t b_batch_stride[3];
  float alpha, beta;
  uint32_t has_c;
  uint32_t epilogue_ops;
  float epilogue_params[4];
};
static_assert(sizeof(GemmPush) == 100);

// se_scale.comp: shared_gpu/se_kernel.h.

// depthwise_mean.comp: shared_gpu/conv_kernel.h.
using gpu::kDepthwiseMeanMaxPlane;

// pointwise_conv.comp: shared_gpu/pointwise_kernel.h.

// expand_depthwise.comp.
struct ExpandDepthwisePush {
  uint32_t batch, channels, in_h, in_w;
  uint32_t out_channels, out_h, out_w, group_out;
  uint32_t kernel_h, kernel_w, stride_h, stride_w;
  uint32_t dilation_h, dilation_w, pad_top, pad_left;
  uint32_t k;
  uint32_t has_mean, expand_ops, depthwise_ops;
  float expand_params[4];
  float depthwise_params[4];
};
static_assert(sizeof(ExpandDepthwisePush) == 112);
// A workgroup holds the expanded input plane in shared memory and computes
// each of its pixels from the expand's K inputs: planes (in and out) of at
// most 28 x 28, and at most this many multiply-adds of the expand per
// workgroup (its latency grows with them while the dispatch it saves stays
// ~6 us). On an H100 at fp16 with bounds of 65536 / 16384 / 8192 / 4096
// (the first of two passes, which agreed within 3%): MobileNetV3-Small 0.348 / 0.342 / 0.355 / 0.361 ms
// (without the fusion 0.356), EfficientNet-B0 0.699 / 0.697 / 0.694 / 0.699
// (0.716), MnasNet 0.472 / 0.462 / 0.455 / 0.455 (0.474). A first version
// with one invocation per pixel walking all of K made all three slower.
inline constexpr int64_t kExpandDepthwiseMaxPlane = 28 * 28;
inline constexpr int64_t kExpandDepthwiseMaxFmas = 16384;

// pool2d.comp.
struct PoolPush {
  uint32_t planes, in_h, in_w, out_h, out_w;
  uint32_t kernel_h, kernel_w, stride_h, stride_w;
  uint32_t dilation_h, dilation_w;
  uint32_t pad_top, pad_left, pad_bottom, pad_right;
  uint32_t mode;  // 0 max, 1 average over input taps, 2 average counting the explicit pads
};

// cast_f16_to_f32.comp, cast_f32_to_f16.comp: elements to convert, and
// whether the 16-bit side is bfloat16 (1) rather than f16 (0).
struct CastPush {
  uint32_t count, bf16;
};

// cast_words.comp, cast_to_bool.comp, cast_from_bool.comp: elements to
// convert and the word kinds either side (0 f32, 1 i32, 2 i64: the kCast*
// constants of shared_gpu/shaders/cast_bits.glsl; the bool side's is unused).
struct CastWordsPush {
  uint32_t count, from, to;
};

// softmax.comp.
struct SoftmaxPush {
  uint32_t rows, row_length, inner;
};

// normalize.comp (LayerNormalization, GroupNormalization).
struct NormPush {
  uint32_t rows, inner, param_rows;
  float epsilon;
};

// pad.comp. table_start[d]: where dim d's map starts in the table binding.
struct PadParams {
  uint32_t total;
  uint32_t rank;
  float fill;
  uint32_t unused[5];
  uint32_t dims[kMaxRank];
  uint32_t table_start[kMaxRank];
};
static_assert(offsetof(PadParams, dims) == 8 * 4);
static_assert(offsetof(PadParams, table_start) == 16 * 4);

// resize.comp.
struct ResizePush {
  uint32_t planes, in_h, in_w, out_h, out_w, linear;
};

}  // namespace hetsched::vulkan
