// Fuzz target: bytes → ONNX import, as the model loader runs it on a .onnx
// file (import_onnx_bytes; then, for a model hetsched can run, the input
// shapes and check_graph: validation and shape inference). Constant folding
// (scheduler/graph_cleanup.h) needs the CPU engine and is not linked here.
#include <cstddef>
#include <cstdint>
#include <span>

#include "graph/onnx_import.h"
#include "graph/shape_inference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hetsched;
  auto report = import_onnx_bytes(std::span<const uint8_t>(data, size), "fuzz.onnx");
  if (!report.is_ok() || !report.value().unsupported.empty()) return 0;
  Graph& graph = report.value().graph;
  if (!apply_input_shapes(graph, {}).is_ok()) return 0;
  (void)check_graph(graph);
  return 0;
}
