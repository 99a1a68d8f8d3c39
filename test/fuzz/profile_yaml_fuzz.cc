// Fuzz target: YAML text → parse_profile (every key of docs/profiles.md) and
// parse_costs (a costs file, `hetsched calibrate -o`), the two YAML readers
// of profile/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "profile/costs_file.h"
#include "profile/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)hetsched::parse_profile(text, "fuzz.yaml");
  (void)hetsched::parse_costs(text, "fuzz.yaml");
  return 0;
}
