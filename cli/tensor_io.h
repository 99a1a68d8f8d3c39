// Model inputs and outputs as raw little-endian files on the command line.
#pragma once

#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "graph/tensor.h"
#include "scheduler/session.h"

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

// A session for `model` under `profile` (with the --input-shape options of
// `common`) and its inputs made from `input_args` (make_inputs).
struct ReadySession {
  std::unique_ptr<Session> session;
  std::vector<Tensor> inputs;
};
Result<ReadySession> open_with_inputs(const Profile& profile, const CommonOptions& common, const std::string& model,
                                      const std::vector<std::string>& input_args);

Status write_tensor_file(const Tensor& t, const std::string& path);
// "min -0.93 max 1.02 mean 0.01 · [0.12, -0.5, ...]"
std::string summarize_tensor(const Tensor& t);

}  // namespace hetsched::cli
