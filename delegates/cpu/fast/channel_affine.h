// An inference BatchNormalization that no conv before it can take (its
// input is a Concat or an Add: DenseNet's and pre-activation ResNets'
// BatchNorm -> Relu before each conv), with the Relu or Clip after it, as
// one pass over NHWC data: y = clamp(x * scale[c] + shift[c]). In an
// XNNPACK segment it is a multiply and an add by per-channel constants and
// a clamp, two or three passes (DenseNet-121: 12.3 of its 47 ms at 1
// thread, about 10 GB/s).
//
// Where its input is a Concat along the channels that only it reads
// (DenseNet: each layer's BatchNorm reads the Concat of every feature map
// before it), the Concat runs in the same pass: each piece goes straight
// from its own tensor to its channels of the output, and the Concat's
// output is never written (DenseNet-121: 62 Concats, 2.8 of its 37 ms at 1
// thread on the session-18 Xeon, each a copy the BatchNorm then read again).
#pragma once

#include <vector>

#include "delegates/cpu/fast/fast_op.h"

namespace hetsched::cpu::fast {

struct AffineGroup {
  NodeId norm = kNoNode;   // the BatchNormalization
  NodeId clamp = kNoNode;  // the Relu or Clip that alone reads it, or kNoNode
  ValueId x = kNoValue;
  ValueId output = kNoValue;
  // The Concat that makes x and that only the BatchNorm reads, or kNoNode;
  // with one, the op reads its inputs (`pieces`, in order) instead of x.
  NodeId concat = kNoNode;
  std::vector<ValueId> pieces;

  // The group runs at its last node's place.
  NodeId lead() const { return clamp != kNoNode ? clamp : norm; }
  std::vector<NodeId> nodes() const;
};

// Every BatchNormalization in inference form on a static rank-4 f32 value
// with constant parameters, with the Relu or Clip (constant bounds) that is
// the only reader of its output when there is one, and the Concat along
// the channels that makes its input when the BatchNorm alone reads that
// and the Concat's inputs are run-time values of the island's own (not its
// inputs, which an NHWC step would read in the caller's order).
std::vector<AffineGroup> find_affine_groups(const Graph& graph);

// The op running `group` (ctx.node is the lead): on NHWC data (ctx.nhwc),
// where the plan puts it, or in the graph's order, where a plan falls back
// from its NHWC steps (xnnpack::drop_nhwc_steps).
Result<std::unique_ptr<FastOp>> make_affine(const FastOpContext& ctx, const AffineGroup& group);

}  // namespace hetsched::cpu::fast
