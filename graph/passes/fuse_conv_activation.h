// Fuses an activation into the Conv that feeds it.
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid. An activation node — Relu, Clip, Sigmoid,
// HardSigmoid, HardSwish or LeakyRelu, for Clip with constant bounds (its
// attributes before opset 11, its inputs from 11) — fuses when its input is
// the only use of a Conv's output (and not a graph output) and the Conv has
// no activation yet. After: the Conv carries the activation as attributes
// (the contract in fused_activation.h) and writes the activation's output
// value, whose name is kept; the activation node is gone.
// Returns the number of activations fused.
Result<int> fuse_conv_activation(Graph& graph);

}  // namespace hetsched
