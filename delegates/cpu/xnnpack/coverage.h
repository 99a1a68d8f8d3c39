// Which nodes of a CPU island XNNPACK can run, and what each asks of the
// memory order of its tensors.
//
// Inside an XNNPACK segment a rank-4 tensor is either NHWC (what XNNPACK's
// spatial ops read) or in the graph's own NCHW order; every other rank is in
// the graph's order. This XNNPACK snapshot has no transpose, so a value
// keeps one order for the whole segment, and the planner (segment_plan.h)
// starts a new segment where two nodes disagree.
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace hetsched::cpu::xnnpack {

enum class LayoutNeed : uint8_t {
  kNhwc,     // Conv, pools, Resize: rank-4 activations in NHWC
  kLogical,  // ops that address the graph's own axes (Softmax's last axis, a fully connected op's last dim)
  kAny,      // elementwise ops: whatever order their inputs share
  kReshape,  // the re-labelling ops: input in the graph's order, or NHWC where both orders coincide; output in the graph's order
};

struct NodeCoverage {
  bool covered = false;
  LayoutNeed layout = LayoutNeed::kAny;
  // Only counts as work when false: a segment of re-labelling ops alone is
  // a copy, not worth an XNNPACK runtime.
  bool relabel_only = false;
  std::string reason;  // why the node stays portable, when !covered
};

// Judges one node of `graph`. Needs the node's value types (shape
// inference done) and reads its constants. Thread-safe.
NodeCoverage xnnpack_coverage(const Graph& graph, NodeId node);

}  // namespace hetsched::cpu::xnnpack
