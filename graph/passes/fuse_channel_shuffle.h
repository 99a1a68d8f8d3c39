// Recognises ShuffleNet's channel shuffle as exporters write it,
//   [Concat along the channels ->] Reshape [N,C,H,W] -> [N,g,C/g,H,W],
//   Transpose perm [0,2,1,3,4], Reshape back to [N,C,H,W],
// so that the CPU delegate can run it as one pass in NHWC between its
// XNNPACK segments (delegates/cpu/xnnpack/nhwc_ops.h) instead of three or
// four portable steps in NCHW with layout conversions around them.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// The op the pass makes: hetsched's own, not ONNX's (in the op set with its
// shape function, graph/ops_tensor.cc); the CPU delegate makes it at init
// (engine xnnpack) and runs it (a portable kernel and an NHWC kernel).
// Its inputs are concatenated along the channels into X (one input: X
// itself), then Y[n, j*g + i] = X[n, i*(C/g) + j], attribute "group" = g.
inline constexpr const char* kChannelShuffleOp = "HetschedChannelShuffle";

// Before: `graph` is valid with its value types known. Rewrites every such
// pattern on an f32 value whose intermediates have one reader each and are
// no graph outputs into one kChannelShuffleOp node, which writes the last
// Reshape's output value (name kept); a Concat along the channels whose
// output only the pattern reads goes into the node too (its inputs become
// the node's). Returns the number of nodes made.
Result<int> fuse_channel_shuffle(Graph& graph);

}  // namespace hetsched
