// Folds an inference BatchNormalization into the Conv that feeds it.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid and its values have inferred types. A
// BatchNormalization folds when its input is the only use of a Conv's
// output (and not a graph output), its scale, bias, mean and variance and
// the Conv's weight and bias are f32 constants, and the Conv carries no
// fused activation. After: the Conv computes
//   W' = W * s,  B' = (B - mean) * s + bias,  s = scale / sqrt(var + epsilon)
// (per output channel, in double) into the BatchNormalization's output
// value, whose name is kept; the BatchNormalization is gone. The new weights
// are new constants, since the old ones may be shared.
// Returns the number of BatchNormalization nodes folded.
Result<int> fold_batch_norm_into_conv(Graph& graph);

}  // namespace hetsched
