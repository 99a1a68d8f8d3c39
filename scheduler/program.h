// Program: a compiled model, ready to load. Islands with their delegate blobs
// and compile specs, the tensors that flow between them, and the steps (island
// runs and handoffs) the executor performs in order. Written to and read from
// disk by scheduler/program_file.h; the schema is scheduler/program.fbs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "delegates/delegate.h"  // Blob, CompileSpecs
#include "graph/tensor.h"

namespace hetsched {

// Version 1: first format. Bump when a reader of the old version would misread a new file.
inline constexpr uint32_t kProgramFormatVersion = 1;

struct ProgramTensor {
  std::string name;
  TensorType type;
};

struct ProgramIsland {
  int id = 0;
  std::string delegate;            // "cpu", "vulkan", "vgf"
  CompileSpecs compile_specs;
  Blob blob;
  std::vector<int> inputs;         // indices into Program::tensors, in the island's input order
  std::vector<int> outputs;
  std::vector<std::string> node_names;  // for preview and traces
  std::vector<std::string> op_types;
};

enum class StepKind : uint8_t { kRunIsland, kHandoff };
enum class HandoffKind : uint8_t { kHostCopy, kUpload, kReadback, kDeviceCopy };

struct ProgramStep {
  StepKind kind = StepKind::kRunIsland;
  int island = -1;                  // kRunIsland: index into Program::islands
  int tensor = -1;                  // kHandoff: the tensor that moves
  HandoffKind handoff = HandoffKind::kHostCopy;
  std::string from, to;             // delegate names, or "host" for program inputs/outputs
  std::string layout;               // "" or a conversion such as "NCHW->NHWC"
};

struct Program {
  uint32_t format_version = kProgramFormatVersion;
  std::string model_name;
  std::string profile_name;
  std::vector<ProgramTensor> tensors;
  std::vector<std::pair<int, Tensor>> constants;  // tensor index → data, for constants read outside any island blob
  std::vector<ProgramIsland> islands;
  std::vector<ProgramStep> steps;
  std::vector<int> inputs;          // tensor indices of the model inputs, in order
  std::vector<int> outputs;
  CompileSpecs metadata;            // free-form: "policy", "hetsched_version", ...
};

std::string_view handoff_kind_name(HandoffKind k);  // "host copy", "upload", "readback", "device copy"

// Structural checks (indices in range, steps refer to existing islands/tensors). Loaders run it.
// Also: tensor names non-empty and unique, island ids unique, node_names and
// op_types of one island equally long, each constant's type equal to its
// tensor's. Does not check data flow (that
// an island's inputs are ready before its step). kInvalidArgument whose
// message is the reason alone ("step 3 runs island 7, but the program has 2
// islands"), for callers to put after their own context.
Status validate_program(const Program& p);

}  // namespace hetsched
