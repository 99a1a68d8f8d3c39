#include "delegates/cpu/fast/winograd_rule.h"

#include <cstdlib>
#include <string>

namespace hetsched::cpu::fast {

bool winograd_pays(const WinogradShape& s) {
  const int64_t tiles = ((s.out_h + 3) / 4) * ((s.out_w + 3) / 4);
  return s.cin >= 16 && s.cout >= 16 && tiles >= 16;
}

WinogradChoice winograd_choice() {
  const char* v = std::getenv("HETSCHED_WINOGRAD");
  if (!v) return WinogradChoice::kRule;
  const std::string s = v;
  return s == "off" ? WinogradChoice::kOff : s == "on" ? WinogradChoice::kOn : WinogradChoice::kRule;
}

}  // namespace hetsched::cpu::fast
