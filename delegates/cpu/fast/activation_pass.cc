#include "delegates/cpu/fast/activation_pass.h"

#include <algorithm>
#include <string>

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

// x / (1 + exp(-x)); exp_approx saturates for x below -88, giving -0.
HETSCHED_FAST_INLINE void silu_body(const float* x, float* y, int64_t n, float, float, float, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.f + exp_approx(-x[i]));
}

#if defined(__x86_64__)
// The same on AVX-512 with the division as a reciprocal estimate (14 bits)
// and one Newton step (about 2 ulp): the divide unit took half of the
// SiLU's time (vdivps, one per 16 elements), 1.4 cycles an element, which
// made EfficientNet-B0's SiLU passes 0.5 ms for 1.2M elements (in a
// standalone copy of both loops, not in the repo: 0.33 -> 0.28 ns an
// element warm, 0.39 -> 0.33 from memory). exp(-x) of
// each block is worked out first into `d` (GCC vectorises exp_approx in a
// plain loop), then x * 1/(1 + e) with the intrinsics.
HETSCHED_AVX512 HETSCHED_FAST_INLINE void silu_body_avx512(const float* x, float* y, int64_t n, float, float, float,
                                                           float) {
  constexpr int64_t kChunk = 256;
  alignas(64) float d[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = std::min(kChunk, n - i0);
    for (int64_t i = 0; i < m; ++i) d[i] = 1.f + exp_approx(-x[i0 + i]);
    int64_t i = 0;
    const __m512 two = _mm512_set1_ps(2.f);
    for (; i + 16 <= m; i += 16) {
      const __m512 den = _mm512_load_ps(d + i);
      // (The unmasked _mm512_rcp14_ps trips GCC 12's -Wmaybe-uninitialized.)
      __m512 r = _mm512_maskz_rcp14_ps(static_cast<__mmask16>(0xFFFF), den);
      r = _mm512_mul_ps(r, _mm512_fnmadd_ps(den, r, two));  // r (2 - d r)
      _mm512_storeu_ps(y + i0 + i, _mm512_mul_ps(_mm512_loadu_ps(x + i0 + i), r));
    }
    for (; i < m; ++i) y[i0 + i] = x[i0 + i] / d[i];
  }
}
#else
HETSCHED_FAST_INLINE void silu_body_avx512(const float* x, float* y, int64_t n, float a, float b, float c, float e) {
  silu_body(x, y, n, a, b, c, e);
}
#endif

HETSCHED_FAST_INLINE void gelu_body(const float* x, float* y, int64_t n, float, float, float, float) {
  for (int64_t i = 0; i < n; ++i) y[i] = gelu_erf(x[i]);
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
    case Kind::kSigmoid: fn_ = best<Kind::kSigmoid>(); break;
    case Kind::kHardSigmoid: fn_ = best<Kind::kHardSigmoid>(); break;
    case Kind::kHardSwish: fn_ = best<Kind::kHardSwish>(); break;
    case Kind::kLeakyRelu: fn_ = best<Kind::kLeakyRelu>(); break;
  }
}

ActivationPass ActivationPass::silu() {
  ActivationPass p;
  p.fn_ = Clones<silu_body, silu_body_avx512>::best();
  return p;
}

ActivationPass ActivationPass::gelu() {
  ActivationPass p;
  p.fn_ = Clones<gelu_body>::best();
  return p;
}

ActivationPass ActivationPass::erf() {
  ActivationPass p;
  p.fn_ = Clones<erf_body>::best();
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
