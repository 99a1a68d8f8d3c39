// Fuzz target: the bytes of a .vgf file → describe_vgf (the engine's public
// vgf_api.h: decode_vgf's parse, structural and data-flow checks, then the
// summary `hetsched run-vgf` prints).
#include <cstddef>
#include <cstdint>

#include "delegates/vgf/vgf_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const hetsched::Blob blob(data, data + size);
  (void)hetsched::vgf::describe_vgf(blob);
  return 0;
}
