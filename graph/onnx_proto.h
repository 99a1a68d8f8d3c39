// Conversions from ONNX protobuf messages to the graph IR's values, shared
// by the ONNX importer's files. Internal to graph/.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "graph/attribute.h"
#include "graph/onnx_external_data.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched::onnx_import {

// "FLOAT", "DOUBLE"... for a TensorProto.DataType value; the number when unknown.
std::string onnx_type_name(int data_type);

// The tensor of an initializer or a tensor attribute. `what` names it in
// errors ("initializer 'w'"). Data may come as raw_data, in the typed field
// of its type, or from an external file through `external`; without a
// reader (a model given as bytes, with no directory) external data is
// refused.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& what,
                                 const ExternalDataReader* external = nullptr);

// One node attribute. Kinds the IR has no place for (graphs, strings lists,
// sparse tensors, type protos) are an unsupported error naming the kind.
Result<Attribute> attribute_from_proto(const onnx::AttributeProto& proto,
                                       const ExternalDataReader* external = nullptr);

// The dtype and shape a graph input declares. A dim given by name
// (dim_param) or not at all is kDynamicDim. `has_shape` is false when the
// input declares no shape at all (its rank is unknown).
Result<TensorType> tensor_type_from_proto(const onnx::ValueInfoProto& info, bool& has_shape);

}  // namespace hetsched::onnx_import
