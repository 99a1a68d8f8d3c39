// Lowering: an island of ONNX-semantics nodes → a VGF file of TOSA-style
// operators over NHWC tensors.
//
// Every rank-4 tensor is kept NHWC (the island's rank-4 inputs and outputs
// included); tensors of other ranks keep the graph's row-major order. Where
// an ONNX op changes rank (Reshape, Flatten, MatMul on 4-D operands, ...) the
// lowering moves the data to row-major order with a transpose first and back
// afterwards; transposes that move only size-1 dims become reshapes, and
// reshapes of intermediates alias their source (no copy).
//
// ONNX → TOSA, in short:
//   Conv → conv2d (group 1) or depthwise_conv2d (group = channels), weights
//     folded to OHWI / HWCM; other groups → per group a slice of the input
//     channels and a conv2d with that group's weights, then one concat;
//     BatchNormalization → mul + add with folded
//     per-channel constants; MatMul → matmul; Gemm → [transpose] matmul [mul]
//     [add]; AveragePool / MaxPool / GlobalAveragePool → avg_pool2d /
//     max_pool2d (count_include_pad=1 as pad + avg_pool2d); Softmax along
//     the last axis in memory → a compute segment with softmax.comp, else
//     reduce_max, sub, exp, reduce_sum, reciprocal, mul; ReduceMean →
//     reduce_sum per axis + mul; ReduceSum / ReduceMax → reduce_sum /
//     reduce_max per axis; Pad (constant mode) → pad; Resize → resize with
//     tap tables; Div → reciprocal + mul; Sqrt → rsqrt + reciprocal; Relu /
//     Clip → clamp; HardSigmoid → mul, add, clamp; Dropout → nothing (the
//     identity); HardSwish → a compute segment running a custom shader (TOSA
//     has no hard-swish: the RFC's tosa.custom case); Gelu → the same with
//     gelu.comp; Erf → erf; LayerNormalization over contiguous rows → a
//     compute segment with layer_norm.comp, else reduce_sum, mul, sub,
//     rsqrt, mul, add; Where (constant condition) → select; Split → slices;
//     Gather (constant increasing indices) → one slice per strided run of
//     the indices, concat, reshape; Expand / Tile →
//     tile; ConvTranspose → transpose_conv2d with weights folded to OHWI;
//     Cast between f32, f16, bf16, i32, i64 and bool → cast (16-bit floats
//     <-> integers or bool: two, through f32), f32 -> f32 → nothing.
#pragma once

#include "delegates/delegate.h"
#include "delegates/vgf/vgf_format.h"

namespace hetsched::vgf {

// Whether `node` can be lowered, and if not why (e.g. Gather: "data-dependent
// indexing: not expressible as a VGF graph").
Capability check_lowerable(const Graph& graph, NodeId node);

// Lowers `island` (every node must pass check_lowerable; a node that does not
// is an kUnsupported error naming it and the reason).
Result<VgfFile> lower_island(const Island& island);

}  // namespace hetsched::vgf
