#include "delegates/cpu/fast/activation_pass.h"

#include <algorithm>
#include <string>

#include "delegates/cpu/fast/avx512_math.h"
#include "delegates/cpu/fast/vector_math.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

// x / (1 + exp(-x)); 0 below x = -87, where the SiLU is under 2e-36 and
// exp_approx(-x) saturates at e^88.4 (x / that, for x near -FLT_MAX, is
// -1.4). NaN stays NaN.
HETSCHED_FAST_INLINE void silu_body(const float* x, float* y, int64_t n, float, float, float, float) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i], s = v / (1.f + exp_approx(-v));
    y[i] = v < -87.f ? 0.f : s;
  }
}

// The sigmoid, SiLU, GELU (both forms) and erf on AVX-512 intrinsics
// (avx512_math.h).
// The SiLU: 0.18 ns an element warm on the 2-core Xeon against 0.34 for
// exp_approx vectorised by GCC and a reciprocal (which once was a VDIVPS
// per 16 elements, 0.39 ns).
enum class Math { kSigmoid, kSilu, kGelu, kGeluTanh, kErf };

#if defined(__x86_64__)
template <Math M>
HETSCHED_AVX512 HETSCHED_FAST_INLINE __m512 apply512(__m512 v) {
  if constexpr (M == Math::kSigmoid) return sigmoid512(v);
  if constexpr (M == Math::kSilu) return silu512(v);
  if constexpr (M == Math::kGelu) return gelu512(v);
  if constexpr (M == Math::kGeluTanh) return gelu_tanh512(v);
  return erf512(v);
}

// Two vectors a step: their two dependency chains of ~20 operations
// overlap (the SiLU: 0.18 against 0.23 ns an element for one).
template <Math M>
HETSCHED_AVX512 HETSCHED_FAST_INLINE void math_body_avx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = apply512<M>(_mm512_loadu_ps(x + i));
    const __m512 b = apply512<M>(_mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(y + i, a);
    _mm512_storeu_ps(y + i + 16, b);
  }
  for (; i < n; i += 16) {
    const __mmask16 part = first_lanes(n - i);
    _mm512_mask_storeu_ps(y + i, part, apply512<M>(_mm512_maskz_loadu_ps(part, x + i)));
  }
}

template <Math M>
HETSCHED_AVX512 HETSCHED_FAST_INLINE void math_avx512(const float* x, float* y, int64_t n, float, float, float, float) {
  math_body_avx512<M>(x, y, n);
}

// The AVX-512 clone of `Body`, math_avx512<M> where there is one.
template <auto Body, Math M>
auto best_math() {
  return Clones<Body, math_avx512<M>>::best();
}
#else
template <auto Body, Math M>
auto best_math() {
  return Clones<Body>::best();
}
#endif

HETSCHED_FAST_INLINE void gelu_body(const float* x, float* y, int64_t n, float, float, float, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = gelu_erf(x[i]);
}

HETSCHED_FAST_INLINE void gelu_tanh_body(const float* x, float* y, int64_t n, float, float, float, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = gelu_tanh(x[i]);
}

HETSCHED_FAST_INLINE void erf_body(const float* x, float* y, int64_t n, float, float, float, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = erf_approx(x[i]);
}

constexpr int64_t kBlock = 4096;

class ActivationOp final : public FastOp {
 public:
  ActivationOp(const Tensor& x, Tensor& y, TaskPool* pool, ActivationPass pass, double flops_per_element)
      : FastOp(y), x_(x), pool_(pool), pass_(pass), flops_per_element_(flops_per_element) {}

  Status run() override {
    const float* x = x_.data<float>();
    float* y = out();
    const int64_t n = x_.num_elements();
    parallel_tasks(pool_, static_cast<size_t>((n + kBlock - 1) / kBlock), flops_per_element_ * static_cast<double>(n),
                   [&](size_t b) {
                     const int64_t begin = static_cast<int64_t>(b) * kBlock;
                     pass_.run(x + begin, y + begin, std::min(kBlock, n - begin));
                   });
    return Status::ok();
  }

 private:
  const Tensor& x_;
  TaskPool* pool_;
  ActivationPass pass_;
  double flops_per_element_;
};

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
    case Kind::kSigmoid: fn_ = best_math<body<Kind::kSigmoid>, Math::kSigmoid>(); break;
    case Kind::kHardSigmoid: fn_ = best<Kind::kHardSigmoid>(); break;
    case Kind::kHardSwish: fn_ = best<Kind::kHardSwish>(); break;
    case Kind::kLeakyRelu: fn_ = best<Kind::kLeakyRelu>(); break;
  }
}

ActivationPass ActivationPass::silu() {
  ActivationPass p;
  p.fn_ = best_math<silu_body, Math::kSilu>();
  return p;
}

ActivationPass ActivationPass::gelu() {
  ActivationPass p;
  p.fn_ = best_math<gelu_body, Math::kGelu>();
  return p;
}

ActivationPass ActivationPass::gelu_tanh() {
  ActivationPass p;
  p.fn_ = best_math<gelu_tanh_body, Math::kGeluTanh>();
  return p;
}

ActivationPass ActivationPass::erf() {
  ActivationPass p;
  p.fn_ = best_math<erf_body, Math::kErf>();
  return p;
}

Result<SplitActivation> split_activation(const FusedActivation& fused, const ActivationPass& then, bool clamp_in_stores,
                                         const char* kernel) {
  SplitActivation s;
  if (!then.empty()) {
    if (fused.kind != Kind::kNone) return invalid_argument(std::string("a ") + kernel + " with two activations");
    s.pass = then;
  } else if (clamp_in_stores && fused.kind == Kind::kRelu) {
    s.lo = 0.f;
  } else if (clamp_in_stores && fused.kind == Kind::kClip) {
    s.lo = fused.min;
    s.hi = fused.max;
  } else {
    s.pass = ActivationPass(fused);
  }
  return s;
}

std::unique_ptr<FastOp> make_activation_op(const Tensor& x, Tensor& y, TaskPool* pool, ActivationPass pass,
                                           double flops_per_element) {
  return std::make_unique<ActivationOp>(x, y, pool, pass, flops_per_element);
}

}  // namespace hetsched::cpu::fast
