// fp16 models (f16 inputs, outputs and weights) computed in f32: the graph is
// rebuilt with every f16 constant widened to f32, a Cast to f32 after each f16
// input, a Cast back to f16 before each f16 output, and the model's own Casts
// to f16 made Casts to f32. The model keeps its f16 interface; every delegate
// runs the f32 ops it already has, and only the edge Casts touch halves.
// (Native 16-bit GPU arithmetic is the next step: issue 11.)
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// True when any input, output or constant of `graph` is f16.
bool has_f16_tensors(const Graph& graph);

// The rebuilt graph (types of node outputs left to shape inference).
// `f16_outputs[i]` says whether graph output i is f16 (what the model
// declares: the graph's own types are not inferred yet).
Result<Graph> compute_f16_in_f32(const Graph& graph, const std::vector<bool>& f16_outputs);

}  // namespace hetsched
