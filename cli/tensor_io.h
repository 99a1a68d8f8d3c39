// Model inputs and outputs as raw little-endian files on the command line.
#pragma once

#include <string>
#include <vector>

#include "graph/tensor.h"

namespace hetsched::cli {

// "--input [NAME=]FILE" / "--output [NAME=]FILE".
struct TensorFileArg {
  std::string name;  // empty: positional
  std::string path;
};
TensorFileArg parse_tensor_file_arg(const std::string& arg);

// Builds the model inputs: from files where given (by name, or in order),
// deterministic data otherwise. A file whose size does not match the input's
// type is an error naming both.
Result<std::vector<Tensor>> make_inputs(const std::vector<std::string>& names, const std::vector<TensorType>& types,
                                        const std::vector<std::string>& args);
// A reproducible input: f32 values in [-1, 1) from a fixed-seed generator,
// integers in [0, 4).
Tensor deterministic_input(const TensorType& type, uint32_t seed);

Status write_tensor_file(const Tensor& t, const std::string& path);
// "min -0.93 max 1.02 mean 0.01 · [0.12, -0.5, ...]"
std::string summarize_tensor(const Tensor& t);

}  // namespace hetsched::cli
