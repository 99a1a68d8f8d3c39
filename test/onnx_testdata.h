// Test data outside the graph IR, read independently of the code under test:
// the ONNX backend node tests (TensorProto .pb files, read with the onnx
// protobuf classes, not the importer) and ONNX Runtime references (raw .bin
// tensors described by a reference.json, scripts/ort/make_reference.js).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched::testing {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Where Debian's libonnx-testdata installs the backend node tests.
inline constexpr char kOnnxNodeTestRoot[] = "/usr/share/libonnx-testdata/data/node";

// The case directories under `root` (those holding a model.onnx), sorted by name.
std::vector<std::filesystem::path> list_onnx_node_tests(const std::filesystem::path& root);

// One backend node test: model.onnx plus test_data_set_0's input_<i>.pb and
// output_<i>.pb, in the order of the model's graph inputs (initializers left
// out) and outputs.
struct OnnxNodeTest {
  std::string name;  // the directory name, e.g. "test_add_bcast"
  std::filesystem::path model;
  std::vector<NamedTensor> inputs;
  std::vector<NamedTensor> outputs;
};
// kUnsupported (with the reason) when an input or output is not a tensor
// (sequence, optional, map) or has an element type hetsched has no dtype
// for; kDataLoss for unreadable files.
Result<OnnxNodeTest> load_onnx_node_test(const std::filesystem::path& dir);

// The backend tests feed many ops' parameters (Reshape's shape, Slice's
// starts, Resize's scales, Pad's pads...) as graph inputs; hetsched needs
// them constant, as real models have them. These are the test's inputs that
// look like parameters: rank <= `max_rank` and read only at node input
// positions >= 1 (never as an op's data input).
std::vector<std::string> parameter_inputs(const OnnxNodeTest& test, int max_rank);
// Writes to `out` a copy of the test's model in which the named inputs are
// initializers holding their test values.
Status write_model_with_frozen_inputs(const OnnxNodeTest& test, const std::vector<std::string>& names,
                                      const std::filesystem::path& out);

// A serialized onnx TensorProto file as a Tensor; its name into `name` when given.
Result<Tensor> read_tensor_proto_file(const std::filesystem::path& path, std::string* name = nullptr);
// The same, for a tensor the model declares of ONNX type `declared_type`
// (0: not known): BFLOAT16 data that ONNX 1.12 stored as UINT16 are read as
// bf16.
Result<Tensor> read_tensor_proto_file_as(const std::filesystem::path& path, int declared_type,
                                         std::string* name = nullptr);

// An ONNX Runtime reference made by scripts/ort/make_reference.js.
struct ModelReference {
  std::string ort_version;
  int threads = 0;
  int seed = 0;
  std::string dist;  // input generator (scripts/ort/common.js)
  std::vector<NamedTensor> inputs;
  std::vector<NamedTensor> outputs;
};
// Reads reference.json and the .bin tensors beside it.
Result<ModelReference> load_model_reference(const std::filesystem::path& reference_json);

// Element-wise comparison in the ONNX backend tests' sense
// (numpy.testing.assert_allclose): |got - want| <= atol + rtol * |want|, NaN
// equal to NaN, infinities equal when their signs are. Integer and bool
// tensors must match exactly.
struct Closeness {
  bool same_type = true;   // dtype and shape equal; when false nothing else is set
  int64_t mismatches = 0;  // elements outside the tolerance
  int64_t first_mismatch = -1;
  double max_abs_error = 0;  // over finite elements
  double got_at_first = 0;
  double want_at_first = 0;
  bool ok() const { return same_type && mismatches == 0; }
  // "ok (max abs error 3.1e-06)", "3 of 120 elements differ, first at 7: got 0.5 want 0.25 ..."
  std::string describe(int64_t elements) const;
};
Closeness compare_allclose(const Tensor& got, const Tensor& want, double rtol, double atol);

}  // namespace hetsched::testing
