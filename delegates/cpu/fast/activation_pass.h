// A fused activation applied in place over a run of floats, vectorised:
// what the fast kernels' epilogues apply after their sums when it is not a
// clamp (those fold into the GEMM's min/max). FusedActivation::apply() per
// element is a switch GCC does not vectorise; over a 1x1 conv's output
// (MobileNetV3's HardSwish convs) the scalar loop cost a third of the conv.
// SiLU is no FusedActivation kind (the graph has no such node; silu.h finds
// its Sigmoid and Mul), so it is a kind of its own here.
#pragma once

#include <cstdint>

#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

class ActivationPass {
 public:
  ActivationPass() = default;
  explicit ActivationPass(const FusedActivation& activation);
  static ActivationPass silu();

  // Nothing to do (no activation, or one the caller folded into a clamp).
  bool empty() const { return fn_ == nullptr; }
  // y[i] = f(x[i]) for i < n; x == y is allowed (in place).
  void run(const float* x, float* y, int64_t n) const {
    if (fn_) fn_(x, y, n, alpha_, beta_, min_, max_);
  }
  void run(float* x, int64_t n) const { run(x, x, n); }

 private:
  using Fn = void (*)(const float* x, float* y, int64_t n, float alpha, float beta, float min, float max);
  Fn fn_ = nullptr;
  float alpha_ = 0.f, beta_ = 0.f, min_ = 0.f, max_ = 0.f;
};

}  // namespace hetsched::cpu::fast
