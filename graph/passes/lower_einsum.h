// Rewrites Einsums into the ops every delegate runs fast: Transpose,
// Reshape, ReduceSum and a batched MatMul (MaxViT's attention, written
// "B G H I D, B G H J D -> B G H I J", is a MatMul by a transposed K).
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph`'s types are inferred. Each Einsum of one or two f32
// operands of static shapes, with no subscript repeated within an operand
// (a diagonal) and equal dims for each subscript (batch subscripts, those
// of both operands and the output, may also be 1 on one side: MatMul
// broadcasts them), becomes:
//   one operand: ReduceSum over the subscripts the output lacks, then a
//   Transpose into the output's order;
//   two: per operand, ReduceSum over the subscripts only it has, a
//   Transpose to [batch, own, contracted] (B: [batch, contracted, own])
//   and, where an operand has other than one own and one contracted
//   subscript, a Reshape to rank batch + 2; the MatMul; a Reshape back to
//   the own subscripts and a Transpose into the output's order.
// Steps that would change nothing are left out. The output keeps its
// value and name; other Einsums stay as they are (the portable kernel runs
// them). Types are inferred again after. Returns the number rewritten.
Result<int> lower_einsum(Graph& graph);

}  // namespace hetsched
