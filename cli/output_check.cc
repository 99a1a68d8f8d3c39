#include "cli/output_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hetsched::cli {

Profile reference_profile() {
  Profile p = default_profile();
  p.name = "reference";
  for (auto& [name, d] : p.delegates) d.enabled = name == "cpu";
  p.delegates["cpu"].enabled = true;
  p.delegates["cpu"].engine = "portable";
  return p;
}

Result<std::vector<OutputCheck>> compare_outputs(const std::vector<std::string>& names,
                                                 const std::vector<Tensor>& got, const std::vector<Tensor>& reference) {
  if (got.size() != reference.size() || names.size() != got.size())
    return invalid_argument("--check: the run gave " + std::to_string(got.size()) + " outputs, the reference " +
                            std::to_string(reference.size()));
  std::vector<OutputCheck> out;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].type().shape != reference[i].type().shape)
      return invalid_argument("--check: output '" + names[i] + "' is " + got[i].type().to_string() +
                              ", the reference's " + reference[i].type().to_string());
    OutputCheck c;
    c.name = names[i];
    const std::vector<float> a = got[i].to_float_vector(), b = reference[i].to_float_vector();
    for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
      // NaN on either side counts as an infinite difference.
      const double d = std::isnan(a[k]) != std::isnan(b[k]) ? INFINITY : std::fabs(double(a[k]) - double(b[k]));
      if (!(std::isnan(a[k]) && std::isnan(b[k]))) c.max_abs_diff = std::max(c.max_abs_diff, d);
      c.max_abs_ref = std::max(c.max_abs_ref, std::isfinite(b[k]) ? std::fabs(double(b[k])) : 0.0);
      if (a[k] != b[k] && !(std::isnan(a[k]) && std::isnan(b[k]))) ++c.differing;
    }
    if (!a.empty()) {
      c.argmax_got = std::max_element(a.begin(), a.end()) - a.begin();
      c.argmax_ref = std::max_element(b.begin(), b.end()) - b.begin();
      c.argmax_equal = c.argmax_got == c.argmax_ref;
    }
    out.push_back(c);
  }
  return out;
}

std::string format_check(const OutputCheck& c) {
  char text[256];
  const double relative = c.max_abs_ref > 0 ? c.max_abs_diff / c.max_abs_ref : c.max_abs_diff;
  std::snprintf(text, sizeof(text), "check %s: max |diff| %.1e = %.1e of max |reference| %.3g, %lld differ, argmax %lld (reference %lld%s)",
                c.name.c_str(), c.max_abs_diff, relative, c.max_abs_ref, static_cast<long long>(c.differing),
                static_cast<long long>(c.argmax_got), static_cast<long long>(c.argmax_ref),
                c.argmax_equal ? "" : ": DIFFERENT");
  return text;
}

}  // namespace hetsched::cli
