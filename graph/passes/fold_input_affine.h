// Folds a per-channel affine step before a Conv into the Conv's weights and
// bias: a scale always (zero padding stays zero), an offset only where the
// Conv pads nothing (a padded border would see the offset, not zeros).
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. A Mul, Add, Sub (value minus constant) or Div
// (value by constant) folds into the Conv that is the only reader of its
// output (no graph output) when the other operand is an f32 constant of one
// value or one value per input channel (every dim 1 but dim 1, at most rank
// 4), the Conv is 2-D and has constant f32 weights (and bias, when it has
// one), and, for Add and Sub, pads nothing (auto_pad NOTSET or VALID, zero
// pads), and the step is not the last Mul of a GELU written out around
// Erf (which the delegates fuse into one Gelu). After: the Conv reads the step's input, with W scaled per input
// channel (Mul, Div) or the bias raised by W's sums times the offset (Add,
// Sub); the step's node is gone. Before a padded Conv, x * s + t (or
// x / s + t, or with Sub) becomes (x + t / s) * s first, so that the scale
// folds and the offset stays. A chain of steps folds in one call.
// Returns the number folded.
Result<int> fold_input_affine(Graph& graph);

}  // namespace hetsched
