#include "delegates/delegate.h"

namespace hetsched {

std::string_view tensor_layout_name(TensorLayout layout) {
  return layout == TensorLayout::kNchw ? "NCHW" : "NHWC";
}

std::string compile_spec_value(const CompileSpecs& specs, std::string_view key, std::string fallback) {
  for (const auto& [k, v] : specs)
    if (k == key) return v;
  return fallback;
}

}  // namespace hetsched
