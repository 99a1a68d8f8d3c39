// Casts between f32, i32, i64 and bool on raw bits, shared by the Vulkan
// and VGF delegates' cast shaders. They give the bits the portable CPU Cast
// kernel gives (delegates/cpu/kernels/extra.cc), with 32-bit integer
// arithmetic only: no shaderInt64 (an i64 is two words, low first, as it
// lies in memory) and no float conversion instruction, whose out-of-range
// behaviour SPIR-V leaves undefined and whose int -> float rounding a device
// may choose.
//
// Word kinds of the elements a cast shader reads or writes as 32-bit words
// (push constants `from` / `to`):
const uint kCastF32 = 0u;
const uint kCastI32 = 1u;
const uint kCastI64 = 2u;

// The int64 (low, high words) f32 bits `f` truncate to, toward zero; NaN
// gives 0 and magnitudes from 2^63 up (infinities included) saturate, as the
// CPU kernel's float_to_int64 does.
uvec2 float_bits_to_int64(uint f) {
  const uint exponent = (f >> 23) & 0xffu;
  const uint mantissa = f & 0x7fffffu;
  const bool negative = (f >> 31) != 0u;
  if (exponent == 0xffu && mantissa != 0u) return uvec2(0u);  // NaN
  const int e = int(exponent) - 127;  // |value| = 1.mantissa * 2^e
  if (e < 0) return uvec2(0u);        // |value| < 1, zeros and subnormals included
  if (e >= 63) return negative ? uvec2(0u, 0x80000000u) : uvec2(0xffffffffu, 0x7fffffffu);
  const uint full = mantissa | 0x800000u;
  uvec2 m;
  if (e <= 23) {
    m = uvec2(full >> uint(23 - e), 0u);
  } else if (e < 55) {
    const uint s = uint(e - 23);  // 1..31
    m = uvec2(full << s, full >> (32u - s));
  } else {
    m = uvec2(0u, full << uint(e - 55));
  }
  if (negative) {  // two's complement
    uint carry;
    m.x = uaddCarry(~m.x, 1u, carry);
    m.y = ~m.y + carry;
  }
  return m;
}

// Bit i (0..63) of the 64-bit value v.
uint bit64(uvec2 v, uint i) { return i < 32u ? (v.x >> i) & 1u : (v.y >> (i - 32u)) & 1u; }

// Whether any of the low n (0..63) bits of v is set.
bool any_low_bits64(uvec2 v, uint n) {
  if (n == 0u) return false;
  if (n < 32u) return (v.x & ((1u << n) - 1u)) != 0u;
  return v.x != 0u || (v.y & ((1u << (n - 32u)) - 1u)) != 0u;
}

// The f32 bits nearest the int64 (low, high words) `v`, ties to even.
uint int64_to_float_bits(uvec2 v) {
  const bool negative = (v.y >> 31) != 0u;
  uvec2 m = v;
  if (negative) {  // magnitude; -2^63 stays 2^63 read unsigned
    uint carry;
    m.x = uaddCarry(~m.x, 1u, carry);
    m.y = ~m.y + carry;
  }
  if (m.x == 0u && m.y == 0u) return 0u;
  const uint top = m.y != 0u ? 32u + uint(findMSB(m.y)) : uint(findMSB(m.x));  // 0..63
  const uint sign = negative ? 0x80000000u : 0u;
  const uint exponent = (top + 127u) << 23;
  if (top <= 23u) return sign | (exponent + ((m.x << (23u - top)) & 0x7fffffu));
  // Keep the top 24 bits; round on the bit below them and the rest (sticky).
  const uint s = top - 23u;  // 1..40
  const uint kept = s < 32u ? (m.x >> s) | (m.y << (32u - s)) : m.y >> (s - 32u);
  const bool round_bit = bit64(m, s - 1u) != 0u;
  const bool sticky = any_low_bits64(m, s - 1u);
  const uint up = (round_bit && (sticky || (kept & 1u) != 0u)) ? 1u : 0u;
  // A carry out of the mantissa reaches the exponent: the right answer.
  return sign | (exponent + (kept & 0x7fffffu) + up);
}

// An element of word kind `kind` (words w0, and w1 for i64) as an int64:
// floats truncated (float_bits_to_int64), i32 sign-extended.
uvec2 cast_word_to_int64(uint kind, uint w0, uint w1) {
  if (kind == kCastF32) return float_bits_to_int64(w0);
  if (kind == kCastI32) return uvec2(w0, (w0 >> 31) != 0u ? 0xffffffffu : 0u);
  return uvec2(w0, w1);
}

// The words of kind `to` for an element of kind `from`: f32 -> f32 the same
// bits, integer -> f32 rounded to nearest even, -> i32 the int64's low word
// (wrapping, as the CPU's narrowing does).
uvec2 cast_words(uint from, uint to, uint w0, uint w1) {
  if (from == kCastF32 && to == kCastF32) return uvec2(w0, 0u);
  const uvec2 n = cast_word_to_int64(from, w0, w1);
  if (to == kCastF32) return uvec2(int64_to_float_bits(n), 0u);
  return n;  // i32 writes n.x alone
}

// An element of kind `from` as a bool byte: nonzero is true (NaN too; -0 is
// false), as the CPU's `f != 0`.
uint cast_word_to_bool(uint from, uint w0, uint w1) {
  if (from == kCastF32) return (w0 & 0x7fffffffu) != 0u ? 1u : 0u;
  if (from == kCastI32) return w0 != 0u ? 1u : 0u;
  return (w0 | w1) != 0u ? 1u : 0u;
}
