// Attention's batched MatMuls (two run-time operands: Q.K^T, P.V) read
// their operands and write their output through strides (strided_view.h),
// so that the layout ops PyTorch's exports put around them run no step:
// the QKV projection's output sliced three ways (Slice, Split, or Reshape,
// Transpose and Gather), split into heads (Reshape), the heads moved in
// front (Transpose), K transposed, the attention scale (Mul or Div by a
// scalar), and after P.V the heads moved back (Transpose, Reshape). Each of
// those was a copy of a sequence x d tensor (BERT-base: eight a layer,
// ~0.4 ms at seq 128, one thread). The MatMul packs B with the scale folded
// in (batch_matmul.cc), reads A in place with its row stride, and writes C
// rows where the chain after it would have put them; an additive mask
// after the scores joins the GEMM's epilogue.
//
// HETSCHED_ATTENTION_STRIDES=off keeps every layout op a step of its own
// (A/B runs).
#pragma once

#include <memory>
#include <set>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/strided_view.h"
#include "graph/graph.h"

namespace hetsched::cpu::fast {

// One batched MatMul with its operands' and output's windows.
struct StridedMatMul {
  NodeId matmul = kNoNode;
  StridedView a, b;  // the operands, over the values they are read from
  // C over `output`, the last value of the layout chain after the MatMul
  // (the MatMul's own output when there is none), which the MatMul writes.
  StridedView c;
  std::vector<NodeId> out_chain;  // the layout nodes after the MatMul, run by it
  // An Add after it (and after scalar Mul/Div only) of a value that
  // broadcasts over C's batches and rows but not its columns: an attention
  // mask or bias, added in the GEMM's epilogue. Then `output` is the Add's.
  NodeId mask_add = kNoNode;
  ValueId mask = kNoValue;
  ValueId output = kNoValue;

  // The MatMul, its out_chain and its mask_add, in graph order.
  std::vector<NodeId> nodes() const;
  // Whether the MatMul folds anything: an operand read from another value,
  // an out_chain or a scale. A plain one runs as a plain fast MatMul.
  bool folds() const;
};

struct AttentionPlan {
  std::vector<StridedMatMul> matmuls;  // those that fold something
  // Layout nodes before the MatMuls that run no step: every reader of their
  // output reads through them (another such node or a MatMul's operand).
  std::set<NodeId> elided;
};

// Whether `node` is a MatMul the fast batched kernel takes: two run-time
// static f32 operands of rank >= 2 (batch_matmul.cc's rule).
bool is_strided_matmul_candidate(const Graph& graph, const Node& node);

// The island's batched MatMuls with what they fold, and the layout nodes
// that then run no step. `excluded`: nodes that belong to other fused groups
// (never folded into a MatMul). Empty under HETSCHED_ATTENTION_STRIDES=off.
AttentionPlan plan_attention_strides(const Graph& graph, const std::set<NodeId>& excluded);

// The op running `m` (batch_matmul.cc); ctx.node is m's MatMul.
Result<std::unique_ptr<FastOp>> make_strided_matmul(const FastOpContext& ctx, const StridedMatMul& m);

}  // namespace hetsched::cpu::fast
