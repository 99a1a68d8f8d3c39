// One arena for a CPU island's intermediate tensors: the values that cross
// between its steps (XNNPACK segments, fast kernels, NHWC steps) get offsets
// by lifetime (memory/arena_planner.h), so that a value is written where one
// that died before it lived, still warm in cache. With one buffer per value
// a model split into many steps touched every activation's own memory once
// per run (taking EfficientNet-B0's 49 SiLUs out of its one segment made
// it 7.65 -> 8.35 ms at 1 thread before this, 7.61 ms after).
//
// Only values whose writer overwrites every byte are placed: those written
// by segments and fast or NHWC kernels. A portable kernel's output keeps a
// zero-filled buffer of its own, as do the island's inputs and outputs.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "delegates/cpu/fast/fast_plan.h"
#include "delegates/cpu/xnnpack/segment_plan.h"
#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched::cpu {

struct IslandArena {
  std::vector<std::pair<ValueId, uint64_t>> placed;  // value -> byte offset in the arena
  uint64_t bytes = 0;                                 // the arena's size
  // View -> root: island_views() of the plan, and each residual conv
  // group's output that takes over its residual's bytes (the group reads
  // the residual last; HETSCHED_RESIDUAL_IN_PLACE=off: none), which the
  // arena planned for.
  std::map<ValueId, ValueId> views;
  // The island_views() nodes: they run no step (the other views' nodes,
  // fused groups and ops that overwrite their input, do).
  std::set<NodeId> view_nodes;
};

// The island's views: every Reshape, Flatten, Squeeze and Unsqueeze that
// runs as a portable step of its own (not inside a segment, on a fast
// kernel or in a group), and every Transpose that moves only axes of size 1
// (fast::keeps_elements_in_place), whose data input is a run-time value and whose
// output is no island edge, mapped to the value whose bytes it shares (the
// first non-view up its chain). A view is the same bytes under another
// shape, so the island gives its output the root's buffer and runs no
// step for it: a copy each (BERT-base's five Reshapes a layer, 0.04 ms
// each at seq 128) is gone.
std::map<ValueId, ValueId> island_views(const Graph& graph, const xnnpack::EnginePlan& plan,
                                        const fast::FastPlan& fast);

// Whether input `i` of `concat` (a Concat run as an NHWC step) may be
// written by its producer straight into the Concat's output, its channels
// at their offset in every pixel (fast::FastOp::write_channels_into; the
// Concat then skips it): the Concat is the value's only reader and reads it
// once, and neither it nor the Concat's output is an island edge (an
// output's buffer may be the caller's, bound per run). The arena keeps the
// Concat's output from such a producer's step on, whether or not the
// producer's op takes it. HETSCHED_CONCAT_IN_PLACE=off: none (A/B runs).
bool concat_input_in_place(const Graph& graph, const Node& concat, size_t i);

// Plans the arena of `graph` run as `plan` (with `fast`'s groups, each of
// which runs at its leading node's step). A view's readers keep its root
// alive; a view itself is not placed. A 1x1 conv group with a residual Add
// that is the residual's last reader (not the conv's own input, no view's
// root) writes its output over the residual, element by element after
// reading it: a view of it here, so the output needs no bytes of its own
// and its stores find their lines in cache (ResNet's bottleneck ends).
Result<IslandArena> plan_island_arena(const Graph& graph, const xnnpack::EnginePlan& plan, const fast::FastPlan& fast);

}  // namespace hetsched::cpu
