// Recognises HardSwish written out in elementwise ops, as exporters before
// opset 14 write it.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. Rewrites, for an f32 x,
//   x * Clip(x + 3, 0, 6) / 6     (the division also as * (1/6); operands
//                                  of Add and Mul in either order)
//   x * HardSigmoid(x) with alpha 1/6 and beta 0.5
// into one HardSwish(x) node when every intermediate value has that one
// reader and is no graph output, the constants are f32 scalars (one
// element that does not broadcast the result to more dims) and Clip's bounds
// are constants. After: the HardSwish writes the last node's output value,
// whose name is kept; the other nodes of the pattern are gone.
// Returns the number of HardSwish nodes made.
Result<int> fuse_hard_swish(Graph& graph);

}  // namespace hetsched
