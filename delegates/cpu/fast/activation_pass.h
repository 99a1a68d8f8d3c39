// A fused activation applied in place over a run of floats, vectorised:
// what the fast kernels' epilogues apply after their sums when it is not a
// clamp (those fold into the GEMM's min/max). FusedActivation::apply() per
// element is a switch GCC does not vectorise; over a 1x1 conv's output
// (MobileNetV3's HardSwish convs) the scalar loop cost a third of the conv.
// SiLU is no FusedActivation kind (the graph has no such node; silu.h finds
// its Sigmoid and Mul), so it is a kind of its own here, as are Gelu and Erf
// (their nodes run whole tensors through make_activation_op: gelu.cc).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include "delegates/cpu/fast/fast_op.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

class ActivationPass {
 public:
  ActivationPass() = default;
  explicit ActivationPass(const FusedActivation& activation);
  static ActivationPass silu();
  static ActivationPass gelu();       // the erf form, x/2 (1 + erf(x / sqrt 2))
  static ActivationPass gelu_tanh();  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  static ActivationPass erf();

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

// A conv's activation split the way the fast conv kernels apply it: the
// node's fused Relu or Clip as a clamp [lo, hi] in the kernel's stores
// (`clamp_in_stores`; else in the pass), anything else, or `then` (a SiLU a
// group took in), as a pass after them. A fused activation beside `then` is
// an error naming `kernel`.
struct SplitActivation {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  ActivationPass pass;
};
Result<SplitActivation> split_activation(const FusedActivation& fused, const ActivationPass& then, bool clamp_in_stores,
                                         const char* kernel);

// An op writing y = pass(x) over a whole tensor, split over `pool` in blocks
// of 4096 elements when `flops_per_element` x the count pays for it.
std::unique_ptr<FastOp> make_activation_op(const Tensor& x, Tensor& y, TaskPool* pool, ActivationPass pass,
                                           double flops_per_element);

}  // namespace hetsched::cpu::fast
