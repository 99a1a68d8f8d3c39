#include "delegates/cpu/fast/pointwise_rule.h"

#include <cstdlib>
#include <string>

#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

// Placeholder thresholds, replaced by bench/pointwise_bench's figures.
constexpr int64_t kMinInChannels = 16;
constexpr int64_t kMinOutChannels = 16;
constexpr int64_t kMinPixels = 12;

}  // namespace

bool pointwise_pays(const PointwiseShape& s) {
  if (!cpu_has_avx512f()) return false;
  return s.cin >= kMinInChannels && s.cout >= kMinOutChannels && s.pixels >= kMinPixels;
}

PointwiseChoice pointwise_choice() {
  const char* v = std::getenv("HETSCHED_POINTWISE");
  if (!v) return PointwiseChoice::kRule;
  const std::string s = v;
  return s == "off" ? PointwiseChoice::kOff : s == "on" ? PointwiseChoice::kOn : PointwiseChoice::kRule;
}

}  // namespace hetsched::cpu::fast
