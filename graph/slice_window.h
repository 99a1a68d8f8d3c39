// How a Slice node with constant bounds reads its input, for the passes and
// delegates that lower or rewrite it (the Vulkan delegate's strided copies,
// the VGF lowering's TOSA slice, graph/passes/concat_of_slices.h). Opset 9's attributes or opset 10's
// constant inputs, clamped by slice_range as shape inference clamps.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Slice as a start and step per input dim (clamped as ONNX does; steps of
// untouched dims are 1) and the output shape they give.
struct SliceWindow {
  std::vector<int64_t> start, step;
  Shape shape;
};
// kUnsupported where the bounds are computed at run time.
Result<SliceWindow> read_slice(const Graph& graph, const Node& node);

}  // namespace hetsched
