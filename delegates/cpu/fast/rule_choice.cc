#include "delegates/cpu/fast/rule_choice.h"

#include <cstdlib>
#include <string>

namespace hetsched::cpu::fast {

RuleChoice rule_choice(const char* variable) {
  const char* v = std::getenv(variable);
  if (!v) return RuleChoice::kRule;
  const std::string s = v;
  return s == "off" ? RuleChoice::kOff : s == "on" ? RuleChoice::kOn : RuleChoice::kRule;
}

}  // namespace hetsched::cpu::fast
