// fp16 and bf16 models (16-bit float inputs, outputs and weights) computed in
// f32: the graph is rebuilt with every f16 or bf16 constant widened to f32, a
// Cast to f32 after each such input, a Cast back to its type before each such
// output, and the model's own Casts to f16 or bf16 made Casts to f32. The
// model keeps its 16-bit interface; every delegate runs the f32 ops it
// already has, and only the edge Casts touch 16-bit floats. (Native 16-bit
// GPU arithmetic is the next step: issue 11.)
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// True when any input or constant of `graph` is f16 or bf16.
bool has_f16_tensors(const Graph& graph);

// The rebuilt graph (types of node outputs left to shape inference).
// `output_dtypes[i]` is graph output i's type as the model declares it (the
// graph's own types are not inferred yet): f16 and bf16 outputs get a Cast
// back to that type; missing entries are f32.
Result<Graph> compute_f16_in_f32(const Graph& graph, const std::vector<DType>& output_dtypes);

}  // namespace hetsched
