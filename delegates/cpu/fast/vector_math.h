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
#else
#define HETSCHED_AVX2
#endif

// Whether this CPU runs AVX2 and FMA (false off x86).
bool cpu_has_avx2_fma();

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

// GELU with the exact (erf) form: x/2 (1 + erf(x / sqrt 2)).
HETSCHED_FAST_INLINE float gelu_erf(float x) { return 0.5f * x * (1.f + erf_approx(x * 0.70710678118654752f)); }

}  // namespace hetsched::cpu::fast
