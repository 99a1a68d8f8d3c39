#include "cli/tensor_io.h"

#include "graph/dtype.h"
#include "scheduler/pipeline.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

namespace hetsched::cli {

TensorFileArg parse_tensor_file_arg(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos) return {"", arg};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

Tensor deterministic_input(const TensorType& type, uint32_t seed) {
  Tensor t(type);
  // A 32-bit LCG (Numerical Recipes constants): the same bytes on every platform.
  uint32_t state = 0x9E3779B9u ^ (seed * 2654435761u);
  const auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;  // 24 random bits
  };
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t r = next();
    switch (type.dtype) {
      case DType::kFloat32: t.data<float>()[i] = static_cast<float>(r) / static_cast<float>(1u << 23) - 1.0f; break;
      case DType::kInt64: t.data<int64_t>()[i] = r % 4; break;
      case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(r % 4); break;
      case DType::kUInt8:
      case DType::kBool:
      case DType::kInt8: reinterpret_cast<uint8_t*>(t.raw())[i] = static_cast<uint8_t>(r % (type.dtype == DType::kBool ? 2 : 4)); break;
      case DType::kFloat16:  // the f32 values, rounded to halves (or bfloat16s)
      case DType::kBFloat16:
        t.data<uint16_t>()[i] =
            float_to_half_float(type.dtype, static_cast<float>(r) / static_cast<float>(1u << 23) - 1.0f);
        break;
    }
  }
  return t;
}

namespace {
Result<Tensor> read_tensor_file(const std::string& input_name, const TensorType& type, const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("failed to read input '" + input_name + "' from '" + path + "': " + std::strerror(errno));
  return read_raw_tensor(f, input_name, type, path);
}
}  // namespace

Result<std::vector<Tensor>> make_inputs(const std::vector<std::string>& names, const std::vector<TensorType>& types,
                                        const std::vector<std::string>& args) {
  std::vector<std::string> paths(names.size());
  size_t next_positional = 0;
  for (const std::string& arg : args) {
    TensorFileArg a = parse_tensor_file_arg(arg);
    size_t idx = names.size();
    if (a.name.empty()) {
      idx = next_positional++;
      if (idx >= names.size())
        return invalid_argument("more --input files than the model's " + std::to_string(names.size()) + " inputs");
    } else {
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == a.name) idx = i;
      if (idx == names.size()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        return invalid_argument("--input names '" + a.name + "', which is not a model input (inputs: " + known + ")");
      }
    }
    paths[idx] = a.path;
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < names.size(); ++i) {
    if (paths[i].empty()) {
      inputs.push_back(deterministic_input(types[i], static_cast<uint32_t>(i)));
    } else {
      HS_ASSIGN_OR_RETURN(Tensor t, read_tensor_file(names[i], types[i], paths[i]));
      inputs.push_back(std::move(t));
    }
  }
  return inputs;
}

Status write_tensor_file(const Tensor& t, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return not_found("failed to write output file '" + path + "': " + std::strerror(errno));
  f.write(reinterpret_cast<const char*>(t.raw()), static_cast<std::streamsize>(t.byte_size()));
  if (!f) return internal_error("failed to write output file '" + path + "': write error");
  return Status::ok();
}

std::string summarize_tensor(const Tensor& t) {
  const std::vector<float> v = t.to_float_vector();
  if (v.empty()) return "(empty)";
  double mn = std::numeric_limits<double>::infinity(), mx = -mn, sum = 0;
  for (float x : v) {
    mn = std::min<double>(mn, x);
    mx = std::max<double>(mx, x);
    sum += x;
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "min %.6g max %.6g mean %.6g · [", mn, mx, sum / static_cast<double>(v.size()));
  std::string s = buf;
  for (size_t i = 0; i < std::min<size_t>(6, v.size()); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + (v.size() > 6 ? ", ...]" : "]");
}

Result<ReadySession> open_with_inputs(const Profile& profile, const CommonOptions& common, const std::string& model,
                                      const std::vector<std::string>& input_args) {
  HS_ASSIGN_OR_RETURN(InputShapes shapes, parse_input_shapes(common.input_shapes));
  ReadySession ready;
  HS_ASSIGN_OR_RETURN(ready.session, open_session(model, profile, shapes));
  HS_ASSIGN_OR_RETURN(ready.inputs,
                      make_inputs(ready.session->input_names(), ready.session->input_types(), input_args));
  return ready;
}

}  // namespace hetsched::cli
