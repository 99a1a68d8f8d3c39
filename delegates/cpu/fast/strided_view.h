// A value of a CPU island seen as a strided window of another value's
// bytes: what a chain of layout ops (Transpose, Reshape and its kin, Slice,
// Gather of one constant index, a scalar Mul or Div) makes of its input,
// without copying it. PyTorch's attention exports reach the batched
// MatMuls through such chains (the QKV projection's output sliced three
// ways, split into heads, transposed, scaled); a kernel that reads its
// operands through strides (batch_matmul.cc) reads the projection's output
// itself and the chain runs no step (attention_plan.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"

namespace hetsched::cpu::fast {

struct StridedView {
  ValueId root = kNoValue;       // whose bytes (f32 elements) are read
  Shape shape;                   // the viewed value's shape
  std::vector<int64_t> strides;  // in elements, one per dim; any value for a dim of size 1
  int64_t offset = 0;            // of element (0, ..., 0), in elements
  float scale = 1.f;             // the value is scale x the root's elements
};

// `root`'s own bytes: row-major strides over its static shape.
StridedView contiguous_view(ValueId root, const Shape& shape);

// The same elements under `shape` (as Reshape does, row-major), when the
// strides allow it without a copy (as torch's view: dims merged only where
// they are contiguous with each other). nullopt otherwise.
std::optional<StridedView> reshape_view(const StridedView& view, const Shape& shape);

// Output axis i is input axis perm[i].
StridedView transpose_view(const StridedView& view, const std::vector<int64_t>& perm);
// A Transpose node's perm for an input of `rank` (reversed axes when absent;
// negative axes counted from the end); kInvalidArgument when it is no
// permutation of that rank.
Result<std::vector<int64_t>> transpose_perm(const Node& node, size_t rank);

// Whether `node` is a layout op apply_layout_node() knows: Transpose,
// Reshape, Flatten, Squeeze, Unsqueeze, Slice, Gather of one constant
// index, Split (each output a slice; GPT-2's QKV split), Mul or Div by a
// constant f32 scalar (data input first for Div). Its data input is input
// 0 (either input for Mul: data_input()).
bool is_layout_node(const Graph& graph, const Node& node);
// The run-time input of a layout node.
ValueId data_input(const Graph& graph, const Node& node);

// The view of `node`'s output `output` (a Split's have several), given the
// view of its data input; nullopt when the op cannot be expressed as
// strides of the same bytes (a Reshape merging dims that are not
// contiguous) or the shapes are not static.
std::optional<StridedView> apply_layout_node(const Graph& graph, const Node& node, const StridedView& input,
                                             size_t output = 0);

// Whether `node` (a layout node) leaves every element where it is: its
// output, row-major, is its input's bytes as they are (a Reshape; a
// Transpose that moves only axes of size 1, as PyTorch's [1, S, d] <->
// [S, 1, d] around attention). The island makes such a node a view.
bool keeps_elements_in_place(const Graph& graph, const Node& node);

// The view of `node`'s data input as a window of the bytes of its output,
// given the view of its output: the inverse of apply_layout_node(), for a
// producer that writes the chain's last value directly (Transpose, the
// Reshape kin and scalar Mul or Div only; nullopt for the others, which
// drop elements).
std::optional<StridedView> invert_layout_node(const Graph& graph, const Node& node, const StridedView& output);

}  // namespace hetsched::cpu::fast
