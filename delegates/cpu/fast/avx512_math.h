// exp, sigmoid and SiLU on 16 floats with AVX-512 intrinsics, for the
// activation passes and epilogues that spend most of their time on them.
//
// vector_math.h's exp_approx is written for GCC to vectorise, and it does,
// but as 2^n by integer conversion, shift and two multiplies, with clamps
// on both sides and the Cephes polynomial in the (p r^2 + r + 1) form:
// about 22 vector instructions for 16 elements, where VSCALEFPS makes 2^n
// from n as a float and saturates on its own, a degree-5 polynomial is
// accurate enough, and VRCP14PS plus a Newton step replaces the divide.
// EfficientNet-B0 spent a fifth of its time at 1 thread in its SiLUs: 0.34
// ns an element warm on the 2-core Xeon, 0.18 with these (two vectors a
// step, sigmoid_body_avx512 in activation_pass.cc).
#pragma once

#include <cstdint>

#include "delegates/cpu/fast/vector_math.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace hetsched::cpu::fast {

// The first min(left, 16) lanes (left > 0): a loop's last, partial vector.
inline __mmask16 first_lanes(int64_t left) { return static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1); }

// e^t, t = Sign x (Sign 1 or -1), for any x: exactly 0 for t below -87
// and e^87 for t above 87, so that the result is 0 or a normal float
// (below 2^-126, VSCALEFPS gives denormals, which took a microcode assist
// each: a causal mask's -inf row through Softmax ran 5x slower), and a
// sigmoid's denominator stays finite. NaN stays NaN (max(c, x) and min(c,
// x) return x for it, and it is "not less than" anything).
// 2^n p(r) with n = round(t / ln 2) by the 1.5 x 2^23 trick, r = t - n ln 2
// (ln 2 in two parts), p XNNPACK's degree-5 minimax polynomial for e^r on
// [-ln2/2, ln2/2]; 2.6e-7 relative error at most. The sign folds into the
// constants: a sigmoid's e^-x costs no negation.
template <int Sign>
HETSCHED_AVX512 HETSCHED_FAST_INLINE __m512 exp512(__m512 x) {
  static_assert(Sign == 1 || Sign == -1);
  // The maskz forms: GCC 12 takes the plain ones' undefined pass-through
  // for an uninitialised read (-Wmaybe-uninitialized).
  const __mmask16 all = 0xFFFF;
  const __mmask16 kept = _mm512_cmp_ps_mask(x, _mm512_set1_ps(Sign * -87.f), Sign > 0 ? _CMP_NLT_UQ : _CMP_NGT_UQ);
  x = _mm512_maskz_min_ps(all, _mm512_set1_ps(87.f), _mm512_maskz_max_ps(all, _mm512_set1_ps(-87.f), x));
  const __m512 shifter = _mm512_set1_ps(12582912.f);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(Sign * 1.44269504088896341f), shifter), shifter);
  // r = Sign x - n ln2_hi - n ln2_lo
  __m512 r = Sign > 0 ? _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62E43p-1f), x)
                      : _mm512_fnmsub_ps(n, _mm512_set1_ps(0x1.62E43p-1f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-0x1.05C61p-29f), r);
  __m512 p = _mm512_set1_ps(0x1.0F9F9Cp-7f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.573A1Ap-5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.555A80p-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.FFFDC6p-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.FFFFF6p-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
  return _mm512_maskz_scalef_ps(kept, p, n);  // p 2^n
}

// 1 / d for a finite normal d whose reciprocal is normal too (a sigmoid's
// denominator, erf's): VRCP14PS (14 bits) and one Newton step, about 2 ulp.
HETSCHED_AVX512 HETSCHED_FAST_INLINE __m512 reciprocal512(__m512 d) {
  const __m512 r = _mm512_maskz_rcp14_ps(static_cast<__mmask16>(0xFFFF), d);
  return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.f)));  // r (2 - d r)
}

// 1 / (1 + e^-x), 0 below x = -87 (where it is under 2e-38, and where
// e^-x, clamped there by exp512, would leave x sigmoid(x) far from 0 for
// x near -FLT_MAX). "Not less than" holds for NaN, which stays NaN.
HETSCHED_AVX512 HETSCHED_FAST_INLINE __m512 sigmoid512(__m512 x) {
  const __m512 d = _mm512_add_ps(exp512<-1>(x), _mm512_set1_ps(1.f));
  const __m512 r = _mm512_maskz_rcp14_ps(static_cast<__mmask16>(0xFFFF), d);
  const __mmask16 above = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.f), _CMP_NLT_UQ);
  return _mm512_maskz_mul_ps(above, r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.f)));  // r (2 - d r)
}

// x / (1 + e^-x): x sigmoid512(x), so 0 below -87.
HETSCHED_AVX512 HETSCHED_FAST_INLINE __m512 silu512(__m512 x) { return _mm512_mul_ps(x, sigmoid512(x)); }

// erf(x): vector_math.h's erf_approx (Eigen's rational function on
// [-4, 4]) with its divide as reciprocal512.
HETSCHED_AVX512 HETSCHED_FAST_INLINE __m512 erf512(__m512 v) {
  const __mmask16 all = 0xFFFF;
  const __m512 x = _mm512_maskz_min_ps(all, _mm512_set1_ps(4.f), _mm512_maskz_max_ps(all, _mm512_set1_ps(-4.f), v));
  const __m512 x2 = _mm512_mul_ps(x, x);
  __m512 p = _mm512_fmadd_ps(x2, _mm512_set1_ps(-2.72614225801306e-10f), _mm512_set1_ps(2.77068142495902e-08f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-2.10102402082508e-06f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-5.69250639462346e-05f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-7.34990630326855e-04f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-2.95459980854025e-03f));
  p = _mm512_fmadd_ps(x2, p, _mm512_set1_ps(-1.60960333262415e-02f));
  p = _mm512_mul_ps(x, p);
  __m512 q = _mm512_fmadd_ps(x2, _mm512_set1_ps(-1.45660718464996e-05f), _mm512_set1_ps(-2.13374055278905e-04f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(-1.68282697438203e-03f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(-7.37332916720468e-03f));
  q = _mm512_fmadd_ps(x2, q, _mm512_set1_ps(-1.42647390514189e-02f));
  return _mm512_mul_ps(p, reciprocal512(q));
}

// GELU, erf form: x/2 (1 + erf(x / sqrt 2)), 0 below x = -4 sqrt 2, where
// erf512 clamps (there GELU is under 5e-8; 1 + erf(-4) left in float would
// give x/2 times ~1e-8, -4e21 at x = -1e30). NaN stays NaN.
HETSCHED_AVX512 HETSCHED_FAST_INLINE __m512 gelu512(__m512 x) {
  const __m512 e = erf512(_mm512_mul_ps(x, _mm512_set1_ps(0.70710678118654752f)));
  const __mmask16 above = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kGeluZeroBelow), _CMP_NLT_UQ);
  return _mm512_maskz_mul_ps(above, _mm512_mul_ps(x, _mm512_set1_ps(0.5f)), _mm512_add_ps(e, _mm512_set1_ps(1.f)));
}

// GELU's tanh form: x sigmoid512(2 sqrt(2/pi) (x + 0.044715 x^3))
// (vector_math.h's gelu_tanh), so 0 where that argument is below -87.
HETSCHED_AVX512 HETSCHED_FAST_INLINE __m512 gelu_tanh512(__m512 x) {
  const __m512 cubic = _mm512_mul_ps(_mm512_mul_ps(x, x), _mm512_set1_ps(0.044715f));
  const __m512 y = _mm512_mul_ps(_mm512_fmadd_ps(cubic, x, x), _mm512_set1_ps(kGeluTanhScale));
  return _mm512_mul_ps(x, sigmoid512(y));
}

}  // namespace hetsched::cpu::fast
#endif
