// Graph ⇄ bytes (FlatBuffers, schema graph/graph.fbs).
//
// The CPU delegate's compiled island blob is a serialized sub-graph, so the
// round trip is exact: the graph's name and opset, every value with its id,
// name, type, type_known flag, producer and constant data, every node with its
// name, op, inputs (kNoValue included), outputs and attributes of every kind,
// and the graph's inputs and outputs in order. Constants that shared one
// Tensor before serializing share one again after loading; the data is copied
// once per Tensor, not once per value.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Same alias as delegates/delegate.h declares (the graph library may not
// include delegates/); the two must stay identical.
using Blob = std::vector<uint8_t>;

// Version of the graph blob format written by serialize_graph. Version 1:
// first format. Bump when a reader of the old version would misread a new
// blob; program files embed graph blobs, so kProgramFormatVersion must be
// bumped with it.
inline constexpr uint32_t kGraphFormatVersion = 1;

// Serializes `graph` as it is; it need not be shape-inferred, but only a
// graph that passes Graph::validate() loads back. The result is bounded by
// FlatBuffers' 2 GiB buffer limit: a larger graph aborts in the builder.
Blob serialize_graph(const Graph& graph);

// Loads a graph written by serialize_graph. `bytes` is not retained; it may
// sit at any address.
//
// Checks, in order: the identifier (HSGR), the format version (kUnsupported
// when newer than kGraphFormatVersion), the FlatBuffers verifier, every id in
// range, dtypes known, constant data exactly as large as its type, then
// Graph::validate(). Anything malformed is kDataLoss with a one-line message
// starting "failed to load graph: "; no input, however corrupt, crashes it.
Result<Graph> deserialize_graph(std::span<const uint8_t> bytes);

}  // namespace hetsched
