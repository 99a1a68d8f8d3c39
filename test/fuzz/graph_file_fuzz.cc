// Fuzz target: the bytes of a graph blob (a .hsg file after its 8-byte
// header, a CPU island's compiled blob) → deserialize_graph, then
// check_graph as load_model runs it on a .hsg file.
#include <cstddef>
#include <cstdint>
#include <span>

#include "graph/graph_serialize.h"
#include "graph/shape_inference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hetsched;
  auto graph = deserialize_graph(std::span<const uint8_t>(data, size));
  if (!graph.is_ok()) return 0;
  (void)check_graph(graph.value());
  return 0;
}
