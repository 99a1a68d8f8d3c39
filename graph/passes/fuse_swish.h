// Recognises SiLU written out as x * Sigmoid(x), as exporters before ONNX
// opset 24 write it (PyTorch's nn.SiLU: EfficientNet, YOLOv5-8), so that an
// engine with a Swish kernel makes one pass over the tensor instead of two
// (and, between XNNPACK segments, one instead of Sigmoid's and Mul's).
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. Rewrites Mul(x, Sigmoid(x)) (operands in either
// order) for an f32 x, when the Sigmoid's output has that Mul as its one
// reader and is no graph output, into one Swish(x) node: ONNX's Swish
// (opset 24) with its default alpha 1, x * Sigmoid(x). After: the Swish
// writes the Mul's output value, whose name is kept; the Sigmoid is gone.
// Returns the number of Swish nodes made.
Result<int> fuse_swish(Graph& graph);

}  // namespace hetsched
