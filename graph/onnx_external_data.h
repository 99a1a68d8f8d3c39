// ONNX external data: tensors whose bytes live in a file beside the model
// (TensorProto.data_location = EXTERNAL, external_data keys location, offset,
// length), as PyTorch's dynamo exporter writes them (model.onnx.data).
// Internal to graph/ (the ONNX importer's files).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hetsched/status.h"

namespace hetsched::onnx_import {

// True when the tensor keeps its data in an external file.
bool has_external_data(const onnx::TensorProto& proto);

// Reads external tensor data relative to the directory of the model file.
// A location must stay inside that directory: absolute paths and paths that
// leave it (`..`, or a symlink pointing out) are refused; offset + length
// must lie within the file, and the length, when given, must be the
// tensor's byte size.
class ExternalDataReader {
 public:
  explicit ExternalDataReader(std::filesystem::path model_dir) : dir_(std::move(model_dir)) {}

  // The `expected_bytes` bytes of `proto`'s data; `what` names the tensor in errors.
  Result<std::vector<uint8_t>> read(const onnx::TensorProto& proto, size_t expected_bytes,
                                    const std::string& what) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace hetsched::onnx_import
