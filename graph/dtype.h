// Element types of tensors. The names follow ONNX's TensorProto data types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hetsched {

enum class DType : uint8_t {
  kFloat32 = 0,
  kInt64 = 1,
  kInt32 = 2,
  kBool = 3,
  kUInt8 = 4,
  kInt8 = 5,
  kFloat16 = 6,
  kBFloat16 = 7,  // bfloat16: the upper 16 bits of an f32
};

// Bytes per element.
size_t dtype_size(DType dtype);
// Short name used in previews and errors: "f32", "i64", "i32", "bool", "u8", "i8", "f16", "bf16".
std::string_view dtype_name(DType dtype);
// Inverse of dtype_name.
std::optional<DType> dtype_from_name(std::string_view name);
// ONNX TensorProto.DataType value (1 = FLOAT, 7 = INT64, ...), and back.
int dtype_to_onnx(DType dtype);
std::optional<DType> dtype_from_onnx(int onnx_type);

// IEEE 754 binary16 ↔ binary32 (DType::kFloat16 elements are the raw 16
// bits), exact for every half (NaN payloads kept in their top bits),
// rounding to nearest even on the way down.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

// bfloat16 ↔ binary32 (DType::kBFloat16 elements are the raw 16 bits: an
// f32's upper half). Widening is exact; narrowing rounds to nearest even
// (overflow to inf) and keeps NaN a NaN (sign and top payload bits, made
// quiet), where plain truncation could turn a NaN into inf.
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);

// True for the 16-bit float types (f16, bf16).
inline bool is_half_float(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }
// A 16-bit float element widened to f32 (`d` is f16 or bf16), and back.
float half_float_to_float(DType d, uint16_t bits);
uint16_t float_to_half_float(DType d, float f);

}  // namespace hetsched
