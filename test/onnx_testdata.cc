#include "test/onnx_testdata.h"

#include <onnx/onnx_pb.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "graph/dtype.h"

namespace hetsched::testing {

namespace fs = std::filesystem;

namespace {

Result<std::string> read_bytes(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("failed to read '" + path.string() + "': cannot open");
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// IEEE half bits → float, subnormals and NaN included.
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits = 0;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant != 0) {
    // Subnormal half: normalise into a float exponent.
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  } else {
    bits = sign;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The element type of a graph input/output, or why it is not a plain tensor.
Result<int> tensor_elem_type(const onnx::ValueInfoProto& info) {
  const onnx::TypeProto& t = info.type();
  if (t.has_sequence_type()) return unsupported("'" + info.name() + "' is a sequence, not a tensor");
  if (t.has_optional_type()) return unsupported("'" + info.name() + "' is an optional, not a tensor");
  if (t.has_map_type()) return unsupported("'" + info.name() + "' is a map, not a tensor");
  if (t.has_sparse_tensor_type()) return unsupported("'" + info.name() + "' is a sparse tensor");
  if (!t.has_tensor_type()) return unsupported("'" + info.name() + "' has no tensor type");
  return t.tensor_type().elem_type();
}

std::string onnx_type_name(int t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
  return std::to_string(t);
}

Status check_elem_type(const onnx::ValueInfoProto& info) {
  HS_ASSIGN_OR_RETURN(int t, tensor_elem_type(info));
  if (!dtype_from_onnx(t))
    return unsupported("'" + info.name() + "' has element type " + onnx_type_name(t) +
                       ", which hetsched has no dtype for");
  return Status::ok();
}

template <typename Field, typename T>
void copy_typed(const Field& field, Tensor& t) {
  T* out = t.data<T>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

Result<Tensor> tensor_from_proto(const onnx::TensorProto& p, const std::string& what) {
  auto dtype = dtype_from_onnx(p.data_type());
  if (!dtype) return unsupported(what + ": element type " + onnx_type_name(p.data_type()) + " has no hetsched dtype");
  if (p.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    return unsupported(what + ": data in an external file");
  Shape shape(p.dims().begin(), p.dims().end());
  Tensor t(TensorType{*dtype, shape});
  const size_t n = static_cast<size_t>(t.num_elements());
  if (p.has_raw_data()) {
    if (p.raw_data().size() != t.byte_size())
      return data_loss(what + ": raw_data holds " + std::to_string(p.raw_data().size()) + " bytes, expected " +
                       std::to_string(t.byte_size()));
    // An empty tensor has no buffer: memcpy to null is undefined even for 0 bytes.
    if (t.byte_size()) std::memcpy(t.raw(), p.raw_data().data(), t.byte_size());
    return t;
  }
  // Typed fields, as onnx.proto assigns them to each element type.
  size_t have = 0;
  switch (*dtype) {
    case DType::kFloat32:
      have = static_cast<size_t>(p.float_data_size());
      break;
    case DType::kInt64:
      have = static_cast<size_t>(p.int64_data_size());
      break;
    default:
      have = static_cast<size_t>(p.int32_data_size());
      break;
  }
  if (have != n)
    return data_loss(what + ": " + std::to_string(have) + " typed elements, expected " + std::to_string(n));
  switch (*dtype) {
    case DType::kFloat32:
      copy_typed<decltype(p.float_data()), float>(p.float_data(), t);
      break;
    case DType::kInt64:
      copy_typed<decltype(p.int64_data()), int64_t>(p.int64_data(), t);
      break;
    case DType::kInt32:
      copy_typed<decltype(p.int32_data()), int32_t>(p.int32_data(), t);
      break;
    case DType::kBool:
    case DType::kUInt8:
      copy_typed<decltype(p.int32_data()), uint8_t>(p.int32_data(), t);
      break;
    case DType::kInt8:
      copy_typed<decltype(p.int32_data()), int8_t>(p.int32_data(), t);
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      copy_typed<decltype(p.int32_data()), uint16_t>(p.int32_data(), t);
      break;
  }
  return t;
}

Result<std::vector<NamedTensor>> read_set(const fs::path& dir, const std::string& prefix,
                                          const std::vector<std::string>& names, const std::vector<int>& types) {
  std::vector<NamedTensor> out;
  for (size_t i = 0; i < names.size(); ++i) {
    const fs::path file = dir / (prefix + std::to_string(i) + ".pb");
    std::string stored_name;
    HS_ASSIGN_OR_RETURN(Tensor t, read_tensor_proto_file_as(file, types[i], &stored_name));
    out.push_back({names[i], std::move(t)});
  }
  if (fs::exists(dir / (prefix + std::to_string(names.size()) + ".pb")))
    return data_loss("'" + dir.string() + "' holds more " + prefix + "*.pb files than the model has");
  return out;
}

double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32:
      return t.data<float>()[i];
    case DType::kFloat16:
      return half_to_float(t.data<uint16_t>()[i]);
    case DType::kBFloat16:  // the upper 16 bits of an f32
      return std::bit_cast<float>(static_cast<uint32_t>(t.data<uint16_t>()[i]) << 16);
    default:
      return static_cast<double>(t.int_at(i));
  }
}

}  // namespace

std::vector<fs::path> list_onnx_node_tests(const fs::path& root) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

Result<Tensor> read_tensor_proto_file(const fs::path& path, std::string* name) {
  return read_tensor_proto_file_as(path, 0, name);
}

Result<Tensor> read_tensor_proto_file_as(const fs::path& path, int declared_type, std::string* name) {
  HS_ASSIGN_OR_RETURN(std::string bytes, read_bytes(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) return data_loss("failed to parse '" + path.string() + "': not a TensorProto");
  if (name) *name = proto.name();
  // ONNX 1.12's generator stored bfloat16 data as UINT16 (its bits, with
  // the model declaring BFLOAT16): read them as the bfloat16s they are.
  if (declared_type == onnx::TensorProto::BFLOAT16 && proto.data_type() == onnx::TensorProto::UINT16)
    proto.set_data_type(onnx::TensorProto::BFLOAT16);
  return tensor_from_proto(proto, "'" + path.string() + "'");
}

Result<OnnxNodeTest> load_onnx_node_test(const fs::path& dir) {
  OnnxNodeTest test;
  test.name = dir.filename().string();
  test.model = dir / "model.onnx";
  HS_ASSIGN_OR_RETURN(std::string bytes, read_bytes(test.model));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    return data_loss("failed to parse '" + test.model.string() + "': not a ModelProto");
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<std::string> input_names, output_names;
  std::vector<int> input_types, output_types;  // as the model declares them
  for (const auto& in : model.graph().input()) {
    if (initializers.count(in.name())) continue;
    HS_RETURN_IF_ERROR(check_elem_type(in).with_context("input "));
    input_names.push_back(in.name());
    input_types.push_back(in.type().tensor_type().elem_type());
  }
  for (const auto& out : model.graph().output()) {
    HS_RETURN_IF_ERROR(check_elem_type(out).with_context("output "));
    output_names.push_back(out.name());
    output_types.push_back(out.type().tensor_type().elem_type());
  }
  const fs::path data = dir / "test_data_set_0";
  HS_ASSIGN_OR_RETURN(test.inputs, read_set(data, "input_", input_names, input_types));
  HS_ASSIGN_OR_RETURN(test.outputs, read_set(data, "output_", output_names, output_types));
  return test;
}

namespace {

Result<onnx::ModelProto> read_model(const fs::path& path) {
  HS_ASSIGN_OR_RETURN(std::string bytes, read_bytes(path));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return data_loss("failed to parse '" + path.string() + "': not a ModelProto");
  return model;
}

}  // namespace

std::vector<std::string> parameter_inputs(const OnnxNodeTest& test, int max_rank) {
  auto model = read_model(test.model);
  if (!model.is_ok()) return {};
  std::vector<std::string> names;
  for (const NamedTensor& in : test.inputs) {
    if (static_cast<int>(in.tensor.shape().size()) > max_rank) continue;
    bool read_as_data = false, read_at_all = false;
    for (const auto& node : model->graph().node()) {
      for (int i = 0; i < node.input_size(); ++i) {
        if (node.input(i) != in.name) continue;
        read_at_all = true;
        read_as_data |= i == 0;
      }
    }
    if (read_at_all && !read_as_data) names.push_back(in.name);
  }
  return names;
}

Status write_model_with_frozen_inputs(const OnnxNodeTest& test, const std::vector<std::string>& names,
                                      const fs::path& out) {
  HS_ASSIGN_OR_RETURN(onnx::ModelProto model, read_model(test.model));
  onnx::GraphProto* g = model.mutable_graph();
  for (const std::string& name : names) {
    const NamedTensor* value = nullptr;
    for (const NamedTensor& in : test.inputs)
      if (in.name == name) value = &in;
    if (!value) return invalid_argument("no test input named '" + name + "'");
    onnx::TensorProto* init = g->add_initializer();
    init->set_name(name);
    init->set_data_type(dtype_to_onnx(value->tensor.dtype()));
    for (int64_t d : value->tensor.shape()) init->add_dims(d);
    init->set_raw_data(reinterpret_cast<const char*>(value->tensor.raw()), value->tensor.byte_size());
    auto* inputs = g->mutable_input();
    for (int i = 0; i < inputs->size(); ++i) {
      if (inputs->Get(i).name() == name) {
        inputs->DeleteSubrange(i, 1);
        break;
      }
    }
  }
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  if (!f || !model.SerializeToOstream(&f)) return internal_error("failed to write '" + out.string() + "'");
  return Status::ok();
}

Result<ModelReference> load_model_reference(const fs::path& reference_json) {
  ModelReference ref;
  const fs::path dir = reference_json.parent_path();
  auto read_list = [&](const YAML::Node& list, std::vector<NamedTensor>& out) -> Status {
    for (const YAML::Node& item : list) {
      auto dtype = dtype_from_name(item["dtype"].as<std::string>());
      if (!dtype) return invalid_argument("unknown dtype '" + item["dtype"].as<std::string>() + "'");
      Tensor t(TensorType{*dtype, item["shape"].as<std::vector<int64_t>>()});
      const fs::path file = dir / item["file"].as<std::string>();
      HS_ASSIGN_OR_RETURN(std::string bytes, read_bytes(file));
      if (bytes.size() != t.byte_size())
        return data_loss("'" + file.string() + "' holds " + std::to_string(bytes.size()) + " bytes, expected " +
                         std::to_string(t.byte_size()) + " for " + t.type().to_string());
      std::memcpy(t.raw(), bytes.data(), bytes.size());
      out.push_back({item["name"].as<std::string>(), std::move(t)});
    }
    return Status::ok();
  };
  try {
    // JSON is a subset of YAML's flow style, so yaml-cpp reads it.
    const YAML::Node root = YAML::LoadFile(reference_json.string());
    ref.ort_version = root["ort_version"].as<std::string>();
    ref.threads = root["threads"].as<int>();
    ref.seed = root["seed"].as<int>();
    ref.dist = root["dist"].as<std::string>();
    HS_RETURN_IF_ERROR(read_list(root["inputs"], ref.inputs));
    HS_RETURN_IF_ERROR(read_list(root["outputs"], ref.outputs));
  } catch (const YAML::Exception& e) {
    return data_loss("failed to read reference '" + reference_json.string() + "': " + e.what());
  }
  return ref;
}

Closeness compare_allclose(const Tensor& got, const Tensor& want, double rtol, double atol) {
  Closeness c;
  if (got.type() != want.type()) {
    c.same_type = false;
    return c;
  }
  const bool exact = want.dtype() != DType::kFloat32 && !is_half_float(want.dtype());
  // bf16 keeps 8 significant bits, so rtol 1e-3 would ask for more than the
  // type holds: within one bf16 unit in the last place (2^-7 relative at
  // worst). ONNX 1.12's reference data truncate f32 to bf16, where ONNX's
  // later spec (and ONNX Runtime, and hetsched) round to nearest even.
  if (want.dtype() == DType::kBFloat16) rtol = std::max(rtol, 1.0 / 128);
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double g = element_as_double(got, i);
    const double w = element_as_double(want, i);
    bool close = false;
    if (exact) {
      close = g == w;
    } else if (std::isnan(w) || std::isnan(g)) {
      close = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      close = g == w;
    } else {
      const double err = std::fabs(g - w);
      c.max_abs_error = std::max(c.max_abs_error, err);
      close = err <= atol + rtol * std::fabs(w);
    }
    if (!close) {
      if (c.mismatches++ == 0) {
        c.first_mismatch = i;
        c.got_at_first = g;
        c.want_at_first = w;
      }
    }
  }
  return c;
}

std::string Closeness::describe(int64_t elements) const {
  std::ostringstream s;
  if (!same_type) return "dtype or shape differs";
  if (mismatches == 0) {
    s << "ok (max abs error " << max_abs_error << ")";
    return s.str();
  }
  s << mismatches << " of " << elements << " elements differ, first at " << first_mismatch << ": got " << got_at_first
    << " want " << want_at_first << " (max abs error " << max_abs_error << ")";
  return s.str();
}

}  // namespace hetsched::testing
