#include "graph/passes/fused_activation.h"

#include <array>
#include <utility>

namespace hetsched {

namespace {
using Kind = FusedActivation::Kind;
constexpr std::array<std::pair<Kind, const char*>, 6> kNames = {{
    {Kind::kRelu, "Relu"},
    {Kind::kClip, "Clip"},
    {Kind::kSigmoid, "Sigmoid"},
    {Kind::kHardSigmoid, "HardSigmoid"},
    {Kind::kHardSwish, "HardSwish"},
    {Kind::kLeakyRelu, "LeakyRelu"},
}};
}  // namespace

std::string fused_activation_name(Kind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "";
}

Result<FusedActivation> read_fused_activation(const Attributes& attrs) {
  FusedActivation a;
  HS_ASSIGN_OR_RETURN(const std::string name, attrs.get_string(kActivationAttr, ""));
  if (name.empty()) return a;
  bool known = false;
  for (const auto& [k, n] : kNames)
    if (name == n) {
      a.kind = k;
      known = true;
    }
  if (!known)
    return invalid_argument("attribute 'activation' is '" + name +
                            "', expected Relu, Clip, Sigmoid, HardSigmoid, HardSwish or LeakyRelu");
  HS_ASSIGN_OR_RETURN(a.min, attrs.get_float(kActivationMinAttr, a.min));
  HS_ASSIGN_OR_RETURN(a.max, attrs.get_float(kActivationMaxAttr, a.max));
  const float default_alpha = a.kind == Kind::kLeakyRelu ? 0.01f : 0.2f;
  HS_ASSIGN_OR_RETURN(a.alpha, attrs.get_float(kActivationAlphaAttr, default_alpha));
  HS_ASSIGN_OR_RETURN(a.beta, attrs.get_float(kActivationBetaAttr, 0.5f));
  return a;
}

void write_fused_activation(const FusedActivation& activation, Attributes& attrs) {
  if (activation.kind == Kind::kNone) return;
  attrs.set(kActivationAttr, fused_activation_name(activation.kind));
  switch (activation.kind) {
    case Kind::kClip:
      attrs.set(kActivationMinAttr, activation.min);
      attrs.set(kActivationMaxAttr, activation.max);
      break;
    case Kind::kHardSigmoid:
      attrs.set(kActivationAlphaAttr, activation.alpha);
      attrs.set(kActivationBetaAttr, activation.beta);
      break;
    case Kind::kLeakyRelu:
      attrs.set(kActivationAlphaAttr, activation.alpha);
      break;
    default:
      break;
  }
}

}  // namespace hetsched
