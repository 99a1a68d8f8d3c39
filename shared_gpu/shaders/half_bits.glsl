// IEEE binary16 and bfloat16 <-> binary32 on raw bits, shared by the
// Vulkan and VGF delegates' cast_f16_to_f32.comp / cast_f32_to_f16.comp. Integer arithmetic rather than
// the GPU's own float conversion: SPIR-V leaves the rounding mode of an
// f32 -> f16 OpFConvert to the implementation (RTE only with float controls)
// and a device may flush subnormals, while graph/dtype.h (the CPU's
// conversion) rounds to nearest even and keeps subnormals and NaN payloads.
// These functions give the same bits as half_to_float / float_to_half.

// The f32 bits of half `h` (in the low 16 bits): exact for every half.
uint half_bits_to_float_bits(uint h) {
  const uint sign = (h & 0x8000u) << 16;
  const uint exponent = (h >> 10) & 0x1fu;
  uint mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return sign | 0x7f800000u | (mantissa << 13);  // inf, NaN (payload kept)
  if (exponent != 0u) return sign | ((exponent + 112u) << 23) | (mantissa << 13);
  if (mantissa == 0u) return sign;  // +-0
  // Subnormal half: normalise. Its value is mantissa * 2^-24.
  uint e = 113u;  // f32 biased exponent of 2^-14
  while ((mantissa & 0x400u) == 0u) {
    mantissa <<= 1;
    --e;
  }
  return sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
}

// The half bits nearest f32 bits `f`, ties to even; overflow to inf, NaN
// stays NaN (quiet, top payload bits kept).
uint float_bits_to_half_bits(uint f) {
  const uint sign = (f >> 16) & 0x8000u;
  const uint exponent = (f >> 23) & 0xffu;
  const uint mantissa = f & 0x7fffffu;
  if (exponent == 0xffu) return sign | 0x7c00u | (mantissa != 0u ? 0x200u | (mantissa >> 13) : 0u);
  // Unbiased exponent e: normal halves have -14 <= e <= 15.
  const int e = int(exponent) - 127;
  if (e > 15) return sign | 0x7c00u;
  if (e >= -14) {
    // Normal: drop 13 mantissa bits, round to nearest even; a carry may
    // reach the exponent (and inf), which is the right answer.
    const uint bits = (uint(e + 15) << 10) | (mantissa >> 13);
    const uint rest = mantissa & 0x1fffu;
    const uint up = (rest > 0x1000u || (rest == 0x1000u && (bits & 1u) != 0u)) ? 1u : 0u;
    return sign | (bits + up);
  }
  if (e < -25) return sign;  // below half the smallest subnormal: +-0
  // Subnormal half: value = full * 2^(e-23), in units of 2^-24 that is
  // full >> (-e - 1), with full the mantissa and its implicit one.
  const uint full = mantissa | 0x800000u;
  const uint shift = uint(-e - 1);  // 14..24
  const uint bits = full >> shift;
  const uint rest = full & ((1u << shift) - 1u);
  const uint halfway = 1u << (shift - 1u);
  const uint up = (rest > halfway || (rest == halfway && (bits & 1u) != 0u)) ? 1u : 0u;
  return sign | (bits + up);
}

// bfloat16 (the upper 16 bits of an f32, in the low 16 bits of `b`) -> f32
// bits: exact.
uint bfloat16_bits_to_float_bits(uint b) { return b << 16; }

// The bfloat16 bits nearest f32 bits `f`, ties to even (overflow to inf);
// NaN stays NaN (sign and top payload bits, made quiet), as graph/dtype.h's
// float_to_bfloat16.
uint float_bits_to_bfloat16_bits(uint f) {
  if ((f & 0x7fffffffu) > 0x7f800000u) return (f >> 16) | 0x40u;
  return (f + 0x7fffu + ((f >> 16) & 1u)) >> 16;
}
