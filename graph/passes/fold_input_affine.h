// Folds a per-channel affine step before a Conv into the Conv's weights and
// bias, where the Conv pads nothing (a padded border would see the step's
// offset where the original sees zeros).
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. A Mul, Add, Sub (value minus constant) or Div
// (value by constant) folds into the Conv that is the only reader of its
// output (no graph output) when the other operand is an f32 constant of one
// value or one value per input channel (every dim 1 but dim 1, at most rank
// 4), the Conv is 2-D with zero pads (auto_pad NOTSET or VALID) and has
// constant f32 weights (and bias, when it has one). After: the Conv reads
// the step's input, with W scaled per input channel (Mul, Div) or the bias
// raised by W's sums times the offset (Add, Sub); the step's node is gone.
// A chain of such steps folds in one call. Returns the number folded.
Result<int> fold_input_affine(Graph& graph);

}  // namespace hetsched
