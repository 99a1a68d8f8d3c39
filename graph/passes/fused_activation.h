// The activation a Conv node carries once fuse_conv_activation has merged
// the activation node that followed it.
//
// Attribute contract on a Conv node (every engine that runs Conv must apply
// it to the output, after the bias, or refuse the node):
//   activation        string: "Relu", "Clip", "Sigmoid", "HardSigmoid",
//                     "HardSwish" or "LeakyRelu"; absent means none
//   activation_min    float, Clip only: lower bound (-inf when the model gave none)
//   activation_max    float, Clip only: upper bound (+inf when the model gave none)
//   activation_alpha  float, HardSigmoid (slope) and LeakyRelu (negative slope)
//   activation_beta   float, HardSigmoid only (offset)
// The formulas are ONNX's for the op of the same name; HardSwish is
// x * HardSigmoid(x) with alpha 1/6, beta 1/2.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "graph/attribute.h"
#include "hetsched/status.h"

namespace hetsched {

inline constexpr char kActivationAttr[] = "activation";
inline constexpr char kActivationMinAttr[] = "activation_min";
inline constexpr char kActivationMaxAttr[] = "activation_max";
inline constexpr char kActivationAlphaAttr[] = "activation_alpha";
inline constexpr char kActivationBetaAttr[] = "activation_beta";

struct FusedActivation {
  enum class Kind { kNone, kRelu, kClip, kSigmoid, kHardSigmoid, kHardSwish, kLeakyRelu };
  Kind kind = Kind::kNone;
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
  float alpha = 0.f;
  float beta = 0.f;

  float apply(float x) const {
    switch (kind) {
      case Kind::kNone:
        return x;
      case Kind::kRelu:
        return std::max(x, 0.f);
      // max before min, as the Clip kernel and numpy.clip do.
      case Kind::kClip:
        return std::min(std::max(x, min), max);
      case Kind::kSigmoid:
        return 1.f / (1.f + std::exp(-x));
      case Kind::kHardSigmoid:
        return std::max(0.f, std::min(1.f, alpha * x + beta));
      case Kind::kHardSwish:
        return x * std::max(0.f, std::min(1.f, x * (1.f / 6.f) + 0.5f));
      case Kind::kLeakyRelu:
        return x < 0.f ? alpha * x : x;
    }
    return x;
  }
};

// The activation recorded in `attrs` (kind kNone when there is none). An
// unknown activation name is an error naming the accepted ones.
Result<FusedActivation> read_fused_activation(const Attributes& attrs);
// Records `activation` in `attrs` per the contract above.
void write_fused_activation(const FusedActivation& activation, Attributes& attrs);
// The ONNX op name of a kind ("Relu"...); "" for kNone.
std::string fused_activation_name(FusedActivation::Kind kind);

}  // namespace hetsched
