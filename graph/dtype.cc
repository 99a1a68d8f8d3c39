#include "graph/dtype.h"

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
    {DType::kFloat16, 2, "f16", 10},
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

}  // namespace hetsched
