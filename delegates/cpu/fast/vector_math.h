// Scalar forms of the math the fast kernels need, written so that GCC
// vectorises a loop over them (no libm calls, no branches), and the AVX2
// switch: each kernel compiles its loop twice, once for baseline x86-64
// and once with target("avx2,fma"), and picks one at run time, since the
// build targets baseline x86-64.
#pragma once

namespace hetsched::cpu::fast {

#define HETSCHED_FAST_INLINE [[gnu::always_inline]] inline
#if defined(__x86_64__) || defined(__i386__)
#define HETSCHED_AVX2 __attribute__((target("avx2,fma")))
#define HETSCHED_AVX512 __attribute__((target("avx512f,avx2,fma")))
#else
#define HETSCHED_AVX2
#define HETSCHED_AVX512
#endif

// Whether this CPU runs AVX2 and FMA, and AVX-512F (false off x86), as
// capped by HETSCHED_FAST_ISA (avx2 | baseline) when that is set.
bool cpu_has_avx2_fma();
bool cpu_has_avx512f();

// A loop body (an always-inline function) compiled three times, for
// AVX-512, AVX2+FMA and baseline x86-64; best() is the one for this CPU:
//   static const auto fn = Clones<rows_body>::best();
// A second body, if given, is the AVX-512 one (the same code with what
// only 32 registers of 64 bytes allow, e.g. pin_lanes).
template <auto Body, auto Avx512Body = Body>
struct Clones;
template <typename... Args, void (*Body)(Args...), void (*Avx512Body)(Args...)>
struct Clones<Body, Avx512Body> {
  using Fn = void (*)(Args...);
  HETSCHED_AVX512 static void avx512(Args... args) { Avx512Body(args...); }
  HETSCHED_AVX2 static void avx2(Args... args) { Body(args...); }
  static void plain(Args... args) { Body(args...); }
  static Fn best() { return cpu_has_avx512f() ? avx512 : cpu_has_avx2_fma() ? avx2 : plain; }
};

// y[i] += r[i] for i < n: a residual added after a conv's activation
// (pointwise_conv.cc, winograd_conv.cc).
HETSCHED_FAST_INLINE void add_floats(const float* r, float* y, long n) {
  for (long i = 0; i < n; ++i) y[i] += r[i];
}

// erf(x) as a rational function of x on [-4, 4] (beyond, erf is +-1 to
// float precision): Eigen's generic_fast_erf_float, a few ulp from the
// true value; relative accuracy holds near 0 too, where erf(x) ~ 1.13 x.
HETSCHED_FAST_INLINE float erf_approx(float v) {
  // Ternaries on values, not std::min/max on references: GCC if-converts
  // these to vector min/max and leaves the loop vectorised.
  float x = v > 4.f ? 4.f : v;
  x = x < -4.f ? -4.f : x;
  const float x2 = x * x;
  float p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = x2 * p + -2.10102402082508e-06f;
  p = x2 * p + -5.69250639462346e-05f;
  p = x2 * p + -7.34990630326855e-04f;
  p = x2 * p + -2.95459980854025e-03f;
  p = x2 * p + -1.60960333262415e-02f;
  p = x * p;
  float q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
  q = x2 * q + -1.68282697438203e-03f;
  q = x2 * q + -7.37332916720468e-03f;
  q = x2 * q + -1.42647390514189e-02f;
  return p / q;
}

// Row reductions in 16 lanes of GCC's generic vectors, which it lowers to
// one AVX-512 register, two AVX2 ones or four SSE ones; the lanes meet in a
// halving tree of shuffles at the end (a float array of lanes summed in
// order went through the stack and cost as much as a 64-wide attention row).
using Lanes = float __attribute__((vector_size(64)));
inline constexpr long kLanes = 16;

HETSCHED_FAST_INLINE Lanes load_lanes(const float* x) {
  Lanes v;
  __builtin_memcpy(&v, x, sizeof(v));
  return v;
}

// Keeps `v` in a register: GCC otherwise folds a load that several FMAs
// use into each of them as a memory operand, one load per FMA. Only in
// code compiled for AVX-512 (a zmm register holds the 64 bytes); a no-op
// where kPin is false.
template <bool kPin>
HETSCHED_FAST_INLINE void pin_lanes(Lanes& v) {
#if defined(__x86_64__)
  if constexpr (kPin) asm("" : "+v"(v));
#else
  (void)v;
#endif
}

HETSCHED_FAST_INLINE float sum_lanes(Lanes v) {
  using Half = float __attribute__((vector_size(32)));
  using Quarter = float __attribute__((vector_size(16)));
  const Half h = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const Quarter q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
  return (q[0] + q[2]) + (q[1] + q[3]);
}

// Sum of f(x[i]) for i < n; f takes and returns floats or Lanes alike.
template <typename F>
HETSCHED_FAST_INLINE float lane_sum(const float* x, long n, F f) {
  Lanes s = {};
  long i = 0;
  for (; i + kLanes <= n; i += kLanes) s += f(load_lanes(x + i));
  float total = sum_lanes(s);
  for (; i < n; ++i) total += f(x[i]);
  return total;
}

// The largest of x[0..n), n > 0.
HETSCHED_FAST_INLINE float lane_max(const float* x, long n) {
  float best = x[0];
  long i = 0;
  if (n >= kLanes) {
    Lanes m = load_lanes(x);
    for (i = kLanes; i + kLanes <= n; i += kLanes) {
      const Lanes v = load_lanes(x + i);
      m = v > m ? v : m;
    }
    for (long j = 0; j < kLanes; ++j) best = m[j] > best ? m[j] : best;
  }
  for (; i < n; ++i) best = x[i] > best ? x[i] : best;
  return best;
}

// exp(x) for x in float's range (below -87.3 it flushes to 0, above 88.7
// it saturates at 2^128): 2^n * p(r) with n = round(x / ln 2) and r = x - n
// ln 2 in [-ln2/2, ln2/2], p Cephes's degree-6 polynomial; about 1 ulp.
HETSCHED_FAST_INLINE float exp_approx(float v) {
  float x = v > 88.3762626647949f ? 88.3762626647949f : v;
  x = x < -87.3365478515625f ? -87.3365478515625f : x;
  // Round to nearest by the 1.5 * 2^23 trick: vectorises, unlike lrintf.
  const float shifter = 12582912.f;
  const float n = (x * 1.44269504088896341f + shifter) - shifter;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.f;
  // 2^n from its exponent bits; n is in [-126, 128) after the clamp, and
  // 2^128 is not a float, so scale by 2^(n-1) twice.
  const int e = static_cast<int>(n) + 126;
  const float half_scale = __builtin_bit_cast(float, e << 23);
  return p * half_scale * 2.f;
}

// GELU with the exact (erf) form: x/2 (1 + erf(x / sqrt 2)); 0 below
// kGeluZeroBelow = -4 sqrt 2, where erf_approx clamps (GELU is under 5e-8
// there, and 1 + erf(-4) in float, a few ulp of 1, times x/2 is not).
inline constexpr float kGeluZeroBelow = -5.65685424949238f;
HETSCHED_FAST_INLINE float gelu_erf(float x) {
  const float g = 0.5f * x * (1.f + erf_approx(x * 0.70710678118654752f));
  return x < kGeluZeroBelow ? 0.f : g;
}

// GELU's tanh form, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as
// x sigmoid(y) with y = 2 sqrt(2/pi) (x + 0.044715 x^3) (1 + tanh(t) is
// 2 sigmoid(2t)); 0 where y is below -87, where exp_approx(-y) saturates.
inline constexpr float kGeluTanhScale = 1.5957691216057308f;  // 2 sqrt(2/pi)
HETSCHED_FAST_INLINE float gelu_tanh(float x) {
  const float y = kGeluTanhScale * (x + 0.044715f * x * x * x);
  const float g = x / (1.f + exp_approx(-y));
  return y < -87.f ? 0.f : g;
}

}  // namespace hetsched::cpu::fast
