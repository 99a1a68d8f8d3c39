// Folds a per-channel affine step after a Conv or ConvTranspose into its
// weights and bias.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. A Mul, Add, Sub (Conv output minus constant),
// Div (Conv output by constant) or inference BatchNormalization folds when
// its data operand is the only use of a Conv's or ConvTranspose's output
// (not a graph output), that node has no fused activation and constant f32
// weights (and bias, when it has one), and the other operands are f32
// constants of one value or one value per output channel (every dim 1 but
// the channel dim, at most the output's rank). After: the Conv computes
// the affine step itself (weights and bias replaced by new constants) and
// writes the step's output value, whose name is kept; the step's node is
// gone. A chain of such steps folds in one call.
// Returns the number of steps folded.
Result<int> fold_conv_affine(Graph& graph);

}  // namespace hetsched
