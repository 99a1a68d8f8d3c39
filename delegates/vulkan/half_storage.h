// Which of an island's tensors the Vulkan delegate keeps in f16 between
// kernels (LoweringOptions::half_storage): the values its own kernels write
// and read, never its edges. Island inputs and outputs keep their graph
// dtype (the executor, handoffs and other delegates see what the graph
// says), constants stay f32 (weights are packed by the lowering), and the
// Casts read and write the element types their shaders are made for. Every
// other kernel reads and writes f16 per binding through
// shared_gpu/shaders/half_io.glsl and computes in f32.
//
// Values that share bytes are one storage class, kept whole or not at all:
// an alias (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout, a Cast
// that keeps the dtype) and its input, and a Concat's output and inputs
// (their producers may write in place, lowering.cc's place_concat_inputs).
// A Reduce whose output has its input's shape may be a plain copy, so it
// joins its input's class too.
#pragma once

#include <set>

#include "graph/graph.h"

namespace hetsched::vulkan {

// The f32 values of `island` (an island's shape-inferred sub-graph) that
// may be stored as f16.
std::set<ValueId> choose_half_values(const Graph& island);

// `island` with those values retyped to f16 (so byte sizes and offsets
// follow): what lower_island lowers when half_storage is on.
Graph with_half_values(const Graph& island, const std::set<ValueId>& half);

}  // namespace hetsched::vulkan
