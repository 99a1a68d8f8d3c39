// The work one node does, independent of where it runs: its op class, the
// floating-point operations and the bytes it reads and writes. The cost
// model (delegates/cost_model.h) turns it into time per delegate.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "graph/graph.h"

namespace hetsched {

// Engines differ by class of op far more than by op: a GPU runs convolutions
// hundreds of times faster than a CPU core, elementwise ops only as much
// faster as its memory is.
enum class OpClass : uint8_t {
  kConv,         // Conv, ConvTranspose: FLOP-bound
  kMatMul,       // MatMul, Gemm
  kElementwise,  // unary/binary math, activations, BatchNormalization, Cast, Where
  kReduce,       // Reduce*, Softmax, pooling, normalisations, ArgMax
  kMovement,     // Transpose, Concat, Split, Slice, Gather, Pad, Resize, Tile, Expand
  kFree,         // re-labels memory only (Reshape, Flatten, Squeeze, Identity, Shape...)
};
inline constexpr int kNumOpClasses = 6;
inline constexpr std::array<OpClass, kNumOpClasses> kAllOpClasses = {
    OpClass::kConv, OpClass::kMatMul, OpClass::kElementwise, OpClass::kReduce, OpClass::kMovement, OpClass::kFree};

// "conv", "matmul", "elementwise", "reduce", "movement", "free".
std::string_view op_class_name(OpClass c);
std::optional<OpClass> op_class_from_name(std::string_view name);
OpClass op_class_of(std::string_view op);

struct OpWork {
  OpClass op_class = OpClass::kElementwise;
  double flops = 0;  // multiply-adds count 2
  double bytes = 0;  // every input (weights included) read once, every output written once
};

// Needs the node's value types (after shape inference); unknown or dynamic
// shapes count as zero elements.
OpWork op_work(const Graph& graph, NodeId node);

// What decides a node's run time, as one line: op type, input and output
// types (constants marked "c:"), attributes (tensor-valued ones by type
// only). Two nodes with one signature do the same work, in any model:
//   Conv(f32[1,3,224,224],c:f32[64,3,7,7],c:f32[64])->f32[1,64,112,112]{group=1,kernel_shape=[7,7],...}
// The key of measured node times in a costs file (`calibrate --model`).
std::string op_signature(const Graph& graph, NodeId node);

}  // namespace hetsched
