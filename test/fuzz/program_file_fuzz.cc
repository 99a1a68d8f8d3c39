// Fuzz target: the bytes of a .hsp file → deserialize_program (identifier,
// version, verifier, conversion, validate_program), then what Session::create
// builds from a valid program before any delegate sees it: the step DAG.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "scheduler/program_file.h"
#include "scheduler/step_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hetsched;
  auto program = deserialize_program(std::span<const uint8_t>(data, size), "fuzz.hsp");
  if (!program.is_ok()) return 0;
  const Program& p = program.value();
  // Which islands are on a device is the delegates' answer at load; any
  // answer must give a well-formed DAG, so try both extremes and a mix.
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<bool> device(p.islands.size());
    for (size_t i = 0; i < device.size(); ++i) device[i] = pattern == 1 || (pattern == 2 && i % 2 == 1);
    (void)build_step_graph(p, device);
  }
  return 0;
}
