// A transformer's linear layer on the fast GEMM (gemm.h): MatMul or Gemm
// with constant weights, the bias Add after it and the residual Add after
// that, as one pass over C. On AVX-512 the GEMM's 12x32 kernel runs 1.4x
// XNNPACK's fully connected op, on AVX2 its 6x16 kernel runs at the FMA
// units' peak too (gemm.h), and the Adds cost nothing in its epilogue.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

// The nodes of one linear layer, in graph order.
struct LinearGroup {
  NodeId matmul = kNoNode;        // MatMul or Gemm, B constant
  NodeId bias_add = kNoNode;      // Add of a constant of N values along the last axis, or kNoNode
  // Nodes between the bias and the residual Add that keep every element in
  // place (a Reshape, a Transpose of axes of size 1: strided_view.h), so
  // the Add sees C's elements in C's order: PyTorch's attention output
  // projection, Gemm -> Reshape -> Transpose -> Add.
  std::vector<NodeId> views;
  NodeId residual_add = kNoNode;  // Add of a run-time value of the output's shape, or kNoNode
  ValueId residual = kNoValue;
  ValueId output = kNoValue;      // the last node's output

  std::vector<NodeId> nodes() const;
};

// The linear layers of `graph` worth taking from XNNPACK: only on CPUs
// with AVX2 and FMA or AVX-512 (the plain-loop kernel is slower), and only
// with at least 16 rows in A (a token sequence; a CNN's classifier stays in
// its segment).
std::vector<LinearGroup> find_linear_groups(const Graph& graph);

// Each group's nodes with the reason, for xnnpack::plan_engine's keep_out.
std::map<NodeId, std::string> linear_keep_out(const std::vector<LinearGroup>& groups);

// The op running `group`; ctx.node is the group's matmul.
Result<std::unique_ptr<FastOp>> make_linear(const FastOpContext& ctx, const LinearGroup& group);

}  // namespace hetsched::cpu::fast
