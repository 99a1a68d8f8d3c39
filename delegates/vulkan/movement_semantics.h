// Split and Pad as the Vulkan delegate lowers them: their parameter inputs
// (constants) and attributes read through graph/ops_extra.h, the helpers
// shape inference and the CPU kernels use, so no engine reads a node
// differently.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched::vulkan {

// Split: the axis (normalised) and each output's size along it.
struct SplitParts {
  int64_t axis = 0;
  std::vector<int64_t> sizes;
};
// kUnsupported when the sizes are computed at run time.
Result<SplitParts> read_split(const Graph& graph, NodeId node);

// Pad as a gather: for each dim, the input index each output index reads,
// or -1 where the fill goes (constant mode); negative pads crop through the
// same map. Every mode (constant, edge, reflect, wrap) is one such map.
struct PadMaps {
  std::vector<std::vector<int64_t>> source;  // [dim][output index]
  float value = 0.f;
};
// kUnsupported when pads, constant_value or axes are computed at run time.
Result<PadMaps> read_pad(const Graph& graph, NodeId node);

}  // namespace hetsched::vulkan
