#include "delegates/cpu/fast/activation_pass.h"

#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

using Kind = FusedActivation::Kind;

// Ternaries on values, so that GCC if-converts them (vector_math.h).
template <Kind K>
HETSCHED_FAST_INLINE float activate(float v, float alpha, float beta, float min, float max) {
  if constexpr (K == Kind::kRelu) return v > 0.f ? v : 0.f;
  if constexpr (K == Kind::kClip) {
    const float lo = v > min ? v : min;  // max before min, as FusedActivation::apply
    return lo < max ? lo : max;
  }
  if constexpr (K == Kind::kSigmoid) return 1.f / (1.f + exp_approx(-v));
  if constexpr (K == Kind::kHardSigmoid) {
    const float t = alpha * v + beta;
    const float lo = t > 0.f ? t : 0.f;
    return lo < 1.f ? lo : 1.f;
  }
  if constexpr (K == Kind::kHardSwish) {
    const float t = v * (1.f / 6.f) + 0.5f;
    const float lo = t > 0.f ? t : 0.f;
    return v * (lo < 1.f ? lo : 1.f);
  }
  if constexpr (K == Kind::kLeakyRelu) return v < 0.f ? alpha * v : v;
  return v;
}

template <Kind K>
HETSCHED_FAST_INLINE void body(const float* x, float* y, int64_t n, float alpha, float beta, float min, float max) {
  for (int64_t i = 0; i < n; ++i) y[i] = activate<K>(x[i], alpha, beta, min, max);
}

// x / (1 + exp(-x)); exp_approx saturates for x below -88, giving -0.
HETSCHED_FAST_INLINE void silu_body(const float* x, float* y, int64_t n, float, float, float, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.f + exp_approx(-x[i]));
}

template <Kind K>
auto best() {
  return Clones<body<K>>::best();
}

}  // namespace

ActivationPass::ActivationPass(const FusedActivation& a) : alpha_(a.alpha), beta_(a.beta), min_(a.min), max_(a.max) {
  switch (a.kind) {
    case Kind::kNone: fn_ = nullptr; break;
    case Kind::kRelu: fn_ = best<Kind::kRelu>(); break;
    case Kind::kClip: fn_ = best<Kind::kClip>(); break;
    case Kind::kSigmoid: fn_ = best<Kind::kSigmoid>(); break;
    case Kind::kHardSigmoid: fn_ = best<Kind::kHardSigmoid>(); break;
    case Kind::kHardSwish: fn_ = best<Kind::kHardSwish>(); break;
    case Kind::kLeakyRelu: fn_ = best<Kind::kLeakyRelu>(); break;
  }
}

ActivationPass ActivationPass::silu() {
  ActivationPass p;
  p.fn_ = Clones<silu_body>::best();
  return p;
}

}  // namespace hetsched::cpu::fast
