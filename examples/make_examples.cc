// Writes the bundled example models into a folder: rfc_model.hsg and the
// RFC's input (linspace(-0.8, 0.8) as raw f32) as rfc_model_input.bin.
#include <cstdio>
#include <fstream>
#include <string>

#include "examples/rfc_model.h"
#include "scheduler/model_loader.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  auto graph = hetsched::examples::make_rfc_model();
  if (!graph.is_ok()) {
    std::fprintf(stderr, "error: %s\n", graph.status().message().c_str());
    return 1;
  }
  hetsched::Status s = hetsched::write_graph_file(*graph, dir + "/rfc_model.hsg");
  if (s.is_ok()) {
    const hetsched::Tensor input = hetsched::examples::rfc_model_input();
    std::ofstream f(dir + "/rfc_model_input.bin", std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(input.raw()), static_cast<std::streamsize>(input.byte_size()));
    if (!f) s = hetsched::internal_error("failed to write " + dir + "/rfc_model_input.bin");
  }
  if (!s.is_ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
