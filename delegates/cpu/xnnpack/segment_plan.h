// How a CPU island runs with engine=xnnpack: its node list cut into
// XNNPACK segments (each becomes one xnn_runtime) and portable runs, with
// the memory order of every value inside a segment.
//
// Values cross between steps in the graph's own (NCHW) order, as the
// portable kernels read them; a segment converts its rank-4 NHWC inputs on
// the way in and its NHWC outputs on the way out, and nowhere else. The
// exception: values between segments and NHWC steps (pass 4) stay NHWC.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "graph/graph.h"

namespace hetsched::cpu::xnnpack {

struct EngineStep {
  bool xnnpack = false;
  // Portable steps only: the step's one node runs on its NHWC kernel
  // (nhwc_ops.h) over values kept NHWC by the segments around it.
  bool nhwc = false;
  std::vector<NodeId> nodes;  // in graph order
  // XNNPACK steps only:
  std::map<ValueId, TensorLayout> layouts;  // every non-constant value the segment reads or writes
  std::vector<ValueId> inputs;              // read from outside the segment, in first-use order
  std::vector<ValueId> outputs;             // written here and read after the segment, by the island's caller, or by nobody
  // Inputs and outputs that stay NHWC in the island's tensors (read or
  // written by NHWC steps only), so the segment does not convert them.
  std::set<ValueId> resident_nhwc;
  // NHWC steps only: the node writes its output in the graph's order (an
  // island output read from NHWC data: fast/fast_plan.cc's lone Resize).
  bool nchw_output = false;
};

struct PortableReason {
  NodeId node = kNoNode;
  std::string reason;
};

struct EnginePlan {
  std::vector<EngineStep> steps;         // in run order
  std::vector<PortableReason> portable;  // every node of a portable step, with why it is there
  // Portable Transposes between the two orders of a rank-4 value whose
  // NHWC side is kept NHWC (pass 4): perm (0, 2, 3, 1) of such a value, or
  // perm (0, 3, 1, 2) into one. Either way the output, in its own order,
  // is the input's bytes: a view, run as no step.
  std::set<NodeId> layout_views;

  int xnnpack_ops() const;
  int xnnpack_segments() const;
  int portable_ops() const;
};

// Plans `graph` (an island's sub-graph: its inputs and outputs are the
// island's). `keep_out`: nodes the caller runs elsewhere although XNNPACK
// covers them (the fast kernels' linear layers), each with the reason.
// Passes, in order:
//   1. coverage: each node is judged on its own (coverage.h), keep_out's
//      nodes not covered;
//   2. segments: maximal runs of covered nodes in graph order, each value
//      given one layout; a node whose inputs' layouts disagree with what it
//      needs starts a new segment; a segment of re-labelling ops alone goes
//      back to portable;
//   3. boundaries: each segment's input and output values;
//   4. NHWC across portable nodes: a portable node with an NHWC kernel
//      (nhwc_ops.h) whose inputs and output are all written and read in
//      NHWC (by segments, or by other such nodes) becomes an NHWC step of
//      its own, and those values stay NHWC between the steps; a Transpose
//      to channels-last (perm 0, 2, 3, 1) of such a value, or from it
//      (perm 0, 3, 1, 2) into one, is one of its readers (writers) too,
//      and becomes a view (layout_views).
//   `nhwc_kernels`: those of keep_out's nodes that the caller can run on
//   NHWC data too (the fast Winograd conv), candidates for pass 4 like the
//   nodes of nhwc_ops.h. `nchw_input_kernels`: those of them that can also
//   read an island input (is_island_input) in the caller's NCHW order and
//   still write NHWC (a network's stem conv on the fast GEMM), so that pass
//   4 takes them with such an input.
EnginePlan plan_engine(const Graph& graph, const std::map<NodeId, std::string>& keep_out = {},
                       const std::set<NodeId>& nhwc_kernels = {}, const std::set<NodeId>& nchw_input_kernels = {});

// Whether `v` is one of the island's inputs (not a constant, written by no
// node): its tensor holds the caller's NCHW data, also where an NHWC step
// reads it.
bool is_island_input(const Graph& graph, ValueId v);

// Turns `plan`'s NHWC steps back into portable steps and clears every
// segment's resident_nhwc and the layout views (for when a segment falls
// back to the portable kernels). Returns whether there was any.
bool drop_nhwc_steps(EnginePlan& plan);

// A plan that runs every node on the portable kernels, each with `reason`.
EnginePlan portable_plan(const Graph& graph, const std::string& reason);

}  // namespace hetsched::cpu::xnnpack
