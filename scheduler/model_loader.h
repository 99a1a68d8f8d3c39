// Loading a model from a file, whatever its format, into a checked Graph.
#pragma once

#include <string>

#include "graph/graph.h"
#include "graph/shape_inference.h"

namespace hetsched {

// Model file formats hetsched reads.
enum class ModelFormat { kGraph, kProgram, kUnknown };
// By extension: .hsg → graph, .hsp → program.
ModelFormat model_format_of(const std::string& path);
// "accepted: .hsg (hetsched graph), .hsp (compiled program)"
std::string accepted_model_formats();

// Reads a graph model file (.hsg), applies `input_shapes`, validates and infers shapes.
Result<Graph> load_model(const std::string& path, const InputShapes& input_shapes = {});

// A graph file: "HSGR" + u32 format version + the serialized graph.
inline constexpr uint32_t kGraphFileVersion = 1;
Status write_graph_file(const Graph& graph, const std::string& path);
Result<Graph> read_graph_file(const std::string& path);

}  // namespace hetsched
