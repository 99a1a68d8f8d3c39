// The host side of the Vulkan delegate's shader interfaces: operation codes,
// push-constant structs and parameter-block layouts. Each struct mirrors the
// declaration in the shader named beside it (delegates/vulkan/shaders/); a
// change on one side must be made on the other.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hetsched::vulkan {

// Elementwise operation codes (shaders/common.glsl). Unary ops are below
// kFirstBinary; binary ops combine the chain value with another operand.
enum class OpCode : uint32_t {
  kNone = 0,
  kRelu = 1,
  kSigmoid = 2,
  kTanh = 3,
  kExp = 4,
  kNeg = 5,
  kAbs = 6,
  kClip = 7,         // p0 = min, p1 = max
  kHardSigmoid = 8,  // p0 = alpha, p1 = beta
  kHardSwish = 9,
  kSin = 10,
  kCos = 11,
  kReciprocal = 12,
  kSqrt = 13,
  kErf = 14,
  kGelu = 15,      // x/2 (1 + erf(x / sqrt 2))
  kGeluTanh = 16,  // Gelu's approximate="tanh" form
  kFloor = 17,
  kCeil = 18,
  kLog = 19,
  kRound = 20,  // halves to even
  kAdd = 32,
  kSub = 33,
  kMul = 34,
  kDiv = 35,
  kPow = 36,
  kMin = 37,
  kMax = 38,
  // Where: a select between the chain value and another operand (or
  // immediate), steered by a condition operand (a bool constant uploaded
  // as f32 0/1) named in bits 24-31 of the op word.
  kWhere = 48,
};
inline constexpr uint32_t kFirstBinary = 32;

// Limits of the parameter blocks. kMaxRank bounds the rank of every tensor
// a generic kernel walks (after merging dims that are contiguous in every
// operand); kMaxOperands is the number of operand bindings of
// elementwise.comp; kMaxChainOps the length of its op list;
// kMaxEpilogueOps the ops a GEMM/conv epilogue packs into one word.
inline constexpr uint32_t kMaxRank = 8;
inline constexpr uint32_t kMaxOperands = 5;
inline constexpr uint32_t kMaxChainOps = 8;
inline constexpr uint32_t kMaxEpilogueOps = 2;

// Workgroup sizes (local_size_x) and the outputs each invocation computes.
inline constexpr uint32_t kElementwiseGroupSize = 256;
inline constexpr uint32_t kElementwisePerThread = 4;
inline constexpr uint32_t kGemmTile = 64;           // gemm.comp: 64x64 outputs per workgroup
inline constexpr uint32_t kConvGroupSize = 256;     // conv2d.comp: 16x16 invocations, each 1/16 of each tile side
inline constexpr uint32_t kConvTileK = 16;          // conv2d.comp: K per step
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

// conv2d.comp, conv2d_reduce.comp and depthwise_conv2d.comp.
struct ConvPush {
  uint32_t batch, channels, in_h, in_w;
  uint32_t out_channels, out_h, out_w;
  uint32_t group_channels, group_out;
  uint32_t kernel_h, kernel_w, stride_h, stride_w;
  uint32_t dilation_h, dilation_w, pad_top, pad_left;
  uint32_t has_bias;
  uint32_t epilogue_ops;
  float epilogue_params[4];
};
static_assert(sizeof(ConvPush) == 92);

// conv2d.comp's specialisation (delegates/vulkan/conv_tiling.h says how it
// is chosen); conv2d_reduce.comp takes `splits` alone, as constant_id 0.
struct ConvSpecialization {
  uint32_t thread_channels;  // constant_id 0: tile channels / 16, 4 or 8
  uint32_t thread_pixels;    // constant_id 1: tile pixels / 16, 4 or 8
  uint32_t splits;           // constant_id 2: K slices; > 1 writes partial sums
  uint32_t epilogue_ops;     // constant_id 3: ConvPush::epilogue_ops (splits == 1)
  uint32_t tap_major;        // constant_id 4: K is tap-major (channels per group % 16 == 0)
};

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
