#include "graph/dtype.h"

#include <bit>

namespace hetsched {
namespace {
struct DTypeInfo {
  DType dtype;
  size_t size;
  std::string_view name;
  int onnx;  // TensorProto.DataType
};
constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, 4, "f32", 1}, {DType::kInt64, 8, "i64", 7}, {DType::kInt32, 4, "i32", 6},
    {DType::kBool, 1, "bool", 9},   {DType::kUInt8, 1, "u8", 2},  {DType::kInt8, 1, "i8", 3},
    {DType::kFloat16, 2, "f16", 10}, {DType::kBFloat16, 2, "bf16", 16},
};
const DTypeInfo& info(DType d) { return kDTypes[static_cast<size_t>(d)]; }
}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }
std::string_view dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& i : kDTypes)
    if (i.name == name) return i.dtype;
  return std::nullopt;
}

int dtype_to_onnx(DType dtype) { return info(dtype).onnx; }

std::optional<DType> dtype_from_onnx(int onnx_type) {
  for (const auto& i : kDTypes)
    if (i.onnx == onnx_type) return i.dtype;
  return std::nullopt;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (man << 13);  // inf, NaN
  } else if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal half: normalise
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
    }
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t exp = (bits >> 23) & 0xff, man = bits & 0x7fffff;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00);  // overflow: inf
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal
    const uint32_t m = man | 0x800000;
    const int shift = 14 - e;
    uint32_t half = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (man >> 13);
  const uint32_t rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry into the exponent: still right
  return static_cast<uint16_t>(sign | half);
}

float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t float_to_bfloat16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);  // NaN: quiet
  // Round to nearest even on the 16 bits dropped; a carry may reach the
  // exponent (and inf), which is the right answer.
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

float half_float_to_float(DType d, uint16_t bits) {
  return d == DType::kBFloat16 ? bfloat16_to_float(bits) : half_to_float(bits);
}

uint16_t float_to_half_float(DType d, float f) {
  return d == DType::kBFloat16 ? float_to_bfloat16(f) : float_to_half(f);
}

}  // namespace hetsched
