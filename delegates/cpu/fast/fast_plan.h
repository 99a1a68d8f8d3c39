// How the fast kernels join a CPU island's engine plan
// (xnnpack/segment_plan.h): which nodes leave XNNPACK for them and which
// portable nodes they take, decided once at init.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "delegates/cpu/fast/attention_plan.h"
#include "delegates/cpu/fast/channel_affine.h"
#include "delegates/cpu/fast/linear.h"
#include "delegates/cpu/fast/conv_group.h"
#include "delegates/cpu/fast/se_excite.h"
#include "delegates/cpu/fast/silu.h"
#include "delegates/cpu/xnnpack/segment_plan.h"
#include "graph/graph.h"

namespace hetsched::cpu::fast {

struct FastPlan {
  std::vector<LinearGroup> linear;        // linear layers on the fast GEMM
  std::map<NodeId, size_t> linear_at;     // a group's first node -> its index in `linear`
  std::set<NodeId> in_linear;             // the groups' other nodes (run with their first)
  std::vector<ConvGroup> conv_groups;      // convs with what their epilogue takes in (conv_group.h)
  std::map<NodeId, size_t> conv_group_at;  // a group's conv -> its index in `conv_groups`
  std::set<NodeId> in_conv_group;          // the groups' other nodes (run with their conv)
  std::vector<SiluGroup> silu;            // Sigmoid -> Mul pairs run as one pass (silu.h)
  std::map<NodeId, size_t> silu_at;       // a group's Mul -> its index in `silu`
  std::set<NodeId> in_silu;               // the groups' Sigmoids (run with their Mul)
  std::vector<AffineGroup> affine;        // BatchNorm (+ Relu/Clip) as one NHWC pass (channel_affine.h)
  std::map<NodeId, size_t> affine_at;     // a group's lead -> its index in `affine`
  std::set<NodeId> in_affine;             // the BatchNorms of groups with a clamp (run with it)
  std::vector<SeGroup> se;                // squeeze-and-excitation gates with their Mul (se_excite.h)
  std::map<NodeId, size_t> se_at;         // a group's Mul -> its index in `se`
  std::set<NodeId> in_se;                 // the groups' other nodes (run with their Mul)
  std::vector<StridedMatMul> strided;     // attention MatMuls with the layout ops they fold (attention_plan.h)
  std::map<NodeId, size_t> strided_at;    // a MatMul -> its index in `strided`
  std::set<NodeId> in_strided;            // the layout nodes after them (run with their MatMul)
  std::set<NodeId> elided;                // layout nodes the MatMuls read through: no step, no output
  // Whether `n` runs with a group's lead node (linear_at, conv_group_at,
  // silu_at, affine_at, strided_at) rather than at its own step, or not at
  // all (elided).
  bool runs_with_group(NodeId n) const {
    return in_linear.count(n) || in_conv_group.count(n) || in_silu.count(n) || in_affine.count(n) ||
           in_se.count(n) || in_strided.count(n) || elided.count(n);
  }
  // Whether `n` is in any group, as its lead or run with it.
  bool in_group(NodeId n) const {
    return runs_with_group(n) || linear_at.count(n) || conv_group_at.count(n) || silu_at.count(n) ||
           affine_at.count(n) || se_at.count(n) || strided_at.count(n);
  }
  // By node: a portable step's node with a fast kernel, or an NHWC step's
  // node whose NHWC kernel is a fast one (the Winograd and 1x1 convs).
  std::vector<bool> on_fast_kernel;
};

// Plans `graph` (an island, engine xnnpack, XNNPACK initialised) for
// XNNPACK and the fast kernels together: the linear layers worth taking
// from XNNPACK are kept out of its segments (linear.h), and so are the
// depthwise convs XNNPACK has no micro-kernel for (depthwise_conv.cc) and
// the dense 3x3 convs Winograd runs faster (winograd_conv.cc) and the other
// dense convs the fast GEMM runs faster (dense_conv_rule.h; these run as
// NHWC steps between segments where their neighbours allow), and the 1x1
// convs the fast GEMM runs faster with their residual Add and Relu or SiLU
// and the depthwise convs followed by a SiLU (conv_group.h; only where
// they then run as NHWC steps, unless HETSCHED_POINTWISE=on for the 1x1
// convs), and the other SiLUs (silu.h; a rank-4 one only
// where it then runs as NHWC steps), and the BatchNorms no conv takes,
// with their Relu or Clip (channel_affine.h; only where they then run as
// NHWC steps), and the squeeze-and-excitation gates with their Mul
// (se_excite.h; only where the Mul then runs as an NHWC step); a segment of one
// node whose fast kernel costs less becomes a portable step (a lone Resize
// making an island output from NHWC data: an NHWC step that writes the
// graph's order, EngineStep::nchw_output), and
// `on_fast_kernel` marks every portable step's node that has a fast kernel.
// `threads`: the island's pool's (conv_group.h's depthwise rule weighs it).
xnnpack::EnginePlan plan_with_fast_kernels(const Graph& graph, FastPlan& plan_out, int threads = 1);

// Whether a segment has the work to pay for splitting its operators over
// the thread pool (the same threshold as the fast kernels' own); below it,
// its runtime is made without the pool and runs on the calling thread.
bool segment_wants_pool(const Graph& graph, const xnnpack::EngineStep& step);

}  // namespace hetsched::cpu::fast
