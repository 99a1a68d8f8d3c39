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

// Version 1: first format. Version 2: the memory plan, alias handoffs.
// Version 3: shape variants (several programs of one model in one file).
// Bump when a reader of the old version would misread a new file.
inline constexpr uint32_t kProgramFormatVersion = 3;

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
// kAlias: the reading island's input is the writing island's output, same
// bytes (one context, one layout): the step moves nothing, it only orders.
enum class HandoffKind : uint8_t { kHostCopy, kUpload, kReadback, kDeviceCopy, kAlias };

struct ProgramStep {
  StepKind kind = StepKind::kRunIsland;
  int island = -1;                  // kRunIsland: index into Program::islands
  int tensor = -1;                  // kHandoff: the tensor that moves
  HandoffKind handoff = HandoffKind::kHostCopy;
  std::string from, to;             // delegate names, or "host" for program inputs/outputs
  std::string layout;               // "" or a conversion such as "NCHW->NHWC"
};

// One buffer of a domain's arena, for previews: a tensor, an island's
// input/output, or an island's scratch block.
struct PlannedBuffer {
  std::string name;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  int first = 0, last = 0;  // the program steps that write it first and touch it last
};

// One arena: "host", or a GPU resource ("gpu:<token>:<group>") whose
// context holds the device islands' memory. Each lane of a session has one
// arena per domain.
struct DomainPlan {
  std::string domain;
  uint64_t planned_bytes = 0;
  // The most bytes live at one step in program order (island scratch
  // counted at its own lower bound): no plan can be smaller.
  uint64_t lower_bound = 0;
  std::vector<PlannedBuffer> buffers;
};

// Where a device island's memory is in its domain's arena.
struct IslandPlacementPlan {
  int domain = -1;  // index into MemoryPlan::domains; -1 for host islands
  uint64_t scratch_offset = 0;
  std::vector<uint64_t> input_offsets, output_offsets;
};

// The memory plan (scheduler/memory_plan.h): domains[0] is the host.
struct MemoryPlan {
  std::vector<DomainPlan> domains;
  // Per program tensor: its offset in the host arena, or -1 where it is not
  // there (model inputs and outputs, which are the caller's memory;
  // constants; tensors that never reach the host).
  std::vector<int64_t> host_offsets;
  std::vector<IslandPlacementPlan> islands;  // per program island
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
  MemoryPlan memory;
};

// "host copy", "upload", "readback", "device copy", "alias"; a handoff with a
// layout conversion on the way is shown as "layout conversion".
std::string_view handoff_kind_name(HandoffKind k);

// Position of `tensor` in an island's input or output list, or -1.
int index_of(const std::vector<int>& list, int tensor);

// Structural checks (indices in range, steps refer to existing islands/tensors). Loaders run it.
// Also: tensor names non-empty and unique, island ids unique, node_names and
// op_types of one island equally long, each constant's type equal to its
// tensor's. Does not check data flow (that
// an island's inputs are ready before its step). kInvalidArgument whose
// message is the reason alone ("step 3 runs island 7, but the program has 2
// islands"), for callers to put after their own context.
Status validate_program(const Program& p);
// Part of validate_program: a memory plan, when the program has one, covers
// every tensor and island, and every host offset lies inside the host arena.
Status validate_memory_plan(const Program& p);

}  // namespace hetsched
