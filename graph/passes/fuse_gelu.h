// Recognises GELU written out around Erf, as exporters before opset 20
// write it (PyTorch's nn.GELU, BERT's gelu), so that an engine with a Gelu
// kernel runs one pass over the tensor instead of five.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. Rewrites, for an f32 x,
//   x * ((Erf(x / sqrt2) + 1) * 0.5),  (x * 0.5) * (Erf(x / sqrt2) + 1)  and
//   (x * (Erf(x / sqrt2) + 1)) * 0.5
// (x / sqrt2 also as x * (1/sqrt2); operands of Add and Mul in either
// order) into one Gelu(x) node (approximate "none") when every intermediate
// value has that one reader and is no graph output and the constants are
// f32 scalars. After: the Gelu writes the last node's output value, whose
// name is kept; the other nodes of the pattern are gone. Returns the number
// of Gelu nodes made.
Result<int> fuse_gelu(Graph& graph);

}  // namespace hetsched
