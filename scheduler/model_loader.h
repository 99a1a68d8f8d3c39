// Loading a model from a file, whatever its format, into a checked Graph.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/shape_inference.h"

namespace hetsched {

// Model file formats hetsched reads.
enum class ModelFormat { kGraph, kProgram, kOnnx, kUnknown };
// By extension: .hsg → graph, .hsp → program, .onnx → ONNX model.
ModelFormat model_format_of(const std::string& path);
// "accepted: .hsg (hetsched graph), .hsp (compiled program), .onnx (ONNX model)"
std::string accepted_model_formats();

// Reads a graph model file (.hsg) or an ONNX model (.onnx), applies
// `input_shapes`, validates and infers shapes. An ONNX model is imported
// strictly (load_onnx) and cleaned up (graph_cleanup.h: constant folding,
// Identity/Dropout removal, BatchNormalization and activation fusion into Conv).
Result<Graph> load_model(const std::string& path, const InputShapes& input_shapes = {});

// The nodes of the ONNX model at `path` that hetsched cannot run, one
// description each ("node 'nms' (NonMaxSuppression, opset 11): op not in the
// hetsched op set"); empty when it can run them all. An error when the model
// cannot be read at all.
Result<std::vector<std::string>> unsupported_onnx_nodes(const std::string& path);

// A graph file: "HSGR" + u32 format version + the serialized graph.
inline constexpr uint32_t kGraphFileVersion = 1;
Status write_graph_file(const Graph& graph, const std::string& path);
Result<Graph> read_graph_file(const std::string& path);

}  // namespace hetsched
