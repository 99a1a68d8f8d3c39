#include "graph/onnx_proto.h"

#include <cstring>
#include <vector>

#include "graph/tensor_size.h"

namespace hetsched::onnx_import {

namespace {

std::string supported_dtypes() { return "FLOAT, INT64, INT32, BOOL, UINT8, INT8, FLOAT16, BFLOAT16"; }

// Copies a typed repeated field of t.num_elements() values into `t`,
// converting each element to T.
template <typename T, typename Field>
void copy_typed(const Field& field, Tensor& t) {
  T* dst = t.data<T>();
  for (int i = 0; i < field.size(); ++i) dst[i] = static_cast<T>(field.Get(i));
}

}  // namespace

std::string onnx_type_name(int data_type) {
  if (onnx::TensorProto_DataType_IsValid(data_type)) {
    const std::string& name = onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(data_type));
    if (!name.empty()) return name;
  }
  return "type " + std::to_string(data_type);
}

Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& what,
                                 const ExternalDataReader* external) {
  const bool is_external = has_external_data(proto);
  if (is_external && !external) {
    std::string location;
    for (const auto& entry : proto.external_data())
      if (entry.key() == "location") location = " ('" + entry.value() + "')";
    return unsupported(what + " keeps its data in an external file" + location +
                       ", which a model given as bytes cannot reach (there is no model directory to read it "
                       "from); import the model from its path, or save it with its data inside "
                       "(onnx.save_model(model, path, save_as_external_data=False))");
  }
  if (proto.has_segment()) return unsupported(what + " is a segment of a larger tensor, which is not supported");
  const std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype)
    return unsupported(what + " has element type " + onnx_type_name(proto.data_type()) +
                       ", which hetsched has no dtype for (supported: " + supported_dtypes() + ")");
  Shape shape;
  // Counted with an overflow guard: the sizes are checked against the data
  // that is there before anything is allocated, so a corrupt dim cannot ask
  // for terabytes.
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  int64_t count = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0 || (d > 0 && count > kMaxElements / d))
      return data_loss(what + " has an invalid shape " +
                       shape_to_string(Shape(proto.dims().begin(), proto.dims().end())));
    count *= d;
    shape.push_back(d);
  }
  const size_t bytes = static_cast<size_t>(count) * dtype_size(*dtype);
  if (is_external) {
    HS_ASSIGN_OR_RETURN(const std::vector<uint8_t> data, external->read(proto, bytes, what));
    Tensor t(TensorType{*dtype, shape});
    // Little-endian like raw_data.
    if (!data.empty()) std::memcpy(t.raw(), data.data(), data.size());
    return t;
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != bytes)
      return data_loss(what + " has " + std::to_string(raw.size()) + " bytes of raw_data, expected " +
                       std::to_string(bytes) + " for " + TensorType{*dtype, shape}.to_string());
    Tensor t(TensorType{*dtype, shape});
    // ONNX stores raw_data little-endian, as the hosts hetsched runs on are.
    if (!raw.empty()) std::memcpy(t.raw(), raw.data(), raw.size());
    return t;
  }
  const int typed_count = *dtype == DType::kFloat32 ? proto.float_data_size()
                          : *dtype == DType::kInt64 ? proto.int64_data_size()
                                                    : proto.int32_data_size();
  const char* field = *dtype == DType::kFloat32 ? "float_data" : *dtype == DType::kInt64 ? "int64_data" : "int32_data";
  if (typed_count != count)
    return data_loss(what + " has " + std::to_string(typed_count) + " values in " + field + ", expected " +
                     std::to_string(count) + " for shape " + shape_to_string(shape));
  Tensor t(TensorType{*dtype, shape});
  if (count == 0) return t;
  switch (*dtype) {
    case DType::kFloat32:
      copy_typed<float>(proto.float_data(), t);
      break;
    case DType::kInt64:
      copy_typed<int64_t>(proto.int64_data(), t);
      break;
    case DType::kInt32:
      copy_typed<int32_t>(proto.int32_data(), t);
      break;
    case DType::kBool:
    case DType::kUInt8:
      copy_typed<uint8_t>(proto.int32_data(), t);
      break;
    case DType::kInt8:
      copy_typed<int8_t>(proto.int32_data(), t);
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      // ONNX keeps the 16 bits of each half (or bfloat16) in the low bits of an int32_data entry.
      copy_typed<uint16_t>(proto.int32_data(), t);
      break;
  }
  return t;
}

Result<Attribute> attribute_from_proto(const onnx::AttributeProto& proto, const ExternalDataReader* external) {
  const std::string what = "attribute '" + proto.name() + "'";
  if (!proto.ref_attr_name().empty())
    return unsupported(what + " refers to function attribute '" + proto.ref_attr_name() +
                       "', which only exists inside ONNX functions");
  onnx::AttributeProto::AttributeType type = proto.type();
  // IR version 1 writers left the type out; the field that is set tells it.
  if (type == onnx::AttributeProto::UNDEFINED) {
    if (proto.has_f())
      type = onnx::AttributeProto::FLOAT;
    else if (proto.has_i())
      type = onnx::AttributeProto::INT;
    else if (proto.has_s())
      type = onnx::AttributeProto::STRING;
    else if (proto.has_t())
      type = onnx::AttributeProto::TENSOR;
    else if (proto.has_g())
      type = onnx::AttributeProto::GRAPH;
    else if (proto.floats_size() > 0)
      type = onnx::AttributeProto::FLOATS;
    else if (proto.ints_size() > 0)
      type = onnx::AttributeProto::INTS;
    else if (proto.strings_size() > 0)
      type = onnx::AttributeProto::STRINGS;
    else
      return invalid_argument(what + " has no type and no value");
  }
  switch (type) {
    case onnx::AttributeProto::FLOAT:
      return Attribute(proto.f());
    case onnx::AttributeProto::INT:
      return Attribute(static_cast<int64_t>(proto.i()));
    case onnx::AttributeProto::STRING:
      return Attribute(proto.s());
    case onnx::AttributeProto::FLOATS:
      return Attribute(std::vector<float>(proto.floats().begin(), proto.floats().end()));
    case onnx::AttributeProto::INTS:
      return Attribute(std::vector<int64_t>(proto.ints().begin(), proto.ints().end()));
    case onnx::AttributeProto::TENSOR: {
      HS_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(proto.t(), what, external));
      return Attribute(std::move(t));
    }
    default:
      return unsupported(what + " is of kind " + onnx::AttributeProto_AttributeType_Name(type) +
                         ", which hetsched does not represent");
  }
}

Result<TensorType> tensor_type_from_proto(const onnx::ValueInfoProto& info, bool& has_shape) {
  const std::string what = "input '" + info.name() + "'";
  if (!info.type().has_tensor_type())
    return unsupported(what + " is not a tensor (sequences, maps and optionals are not supported)");
  const auto& tt = info.type().tensor_type();
  const std::optional<DType> dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype)
    return unsupported(what + " has element type " + onnx_type_name(tt.elem_type()) +
                       ", which hetsched has no dtype for (supported: " + supported_dtypes() + ")");
  TensorType type{*dtype, {}};
  has_shape = tt.has_shape();
  for (const auto& dim : tt.shape().dim())
    type.shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : kDynamicDim);
  if (!has_representable_size(type))
    return data_loss(what + " has type " + type.to_string() + ", larger than 2^63 bytes");
  return type;
}

}  // namespace hetsched::onnx_import
