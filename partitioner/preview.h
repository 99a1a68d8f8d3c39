// Printing a PartitionPlan: the text table, JSON and Graphviz DOT that
// `hetsched preview` shows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "partitioner/partition_plan.h"

namespace hetsched {

// The few facts of the deployment profile that the preview prints, as plain
// values: the scheduler takes them from a Profile (scheduler/partition_profile.h),
// so partitioner/ never reads profiles.
struct PreviewProfile {
  std::string name;  // the profile's name
  int min_partition_size = 1;
  std::string sync;  // the sync mode as profiles spell it: "timeline", ...
  // How a GPU delegate finds its shared context (its profile keys).
  struct GpuContext {
    bool shared = true;  // false: gpu_shared_context_mode disabled, a private context
    std::string token;
    int64_t group = 0;
    std::string mode;    // "lookup_or_create", ...
    std::string device;  // "auto", an index or a name substring
  };
  // By delegate name, for every delegate but the CPU (which has no context).
  std::map<std::string, GpuContext> gpu_contexts;
};

// A handoff as the compiled program does it (scheduler/program_preview.h).
struct PreviewHandoff {
  std::string value, from, to;
  std::string kind;    // "upload", "readback", "device copy", "layout conversion", "alias"
  std::string layout;  // "" or "NCHW->NHWC"
  uint64_t bytes = 0;
  double predicted_ms = -1;  // the cost model's time for it; -1: no prediction
};

// A device island's command buffer as its delegate records it
// (Delegate::command_stream): between its leading and trailing barriers.
struct PreviewCommands {
  int island = 0;
  uint64_t dispatches = 0, copies = 0, barriers = 0;
};

// What the preview shows beyond the partition, from the compiled program.
struct PreviewHeader {
  std::string context_line;  // "vgf_vk_unified_e2e:7 → llvmpipe · shared by vgf, vulkan"; empty when no GPU
  // The program's handoff steps; without a program, derived from the plan's cut edges.
  std::optional<std::vector<PreviewHandoff>> handoffs;
  // Per device island, from the compiled program's blobs.
  std::vector<PreviewCommands> commands;
  std::string memory_text;  // appended as is to the text
  std::string memory_json;  // a JSON value, emitted as "memory" when not empty
};

std::string format_plan_text(const Graph& graph, const PartitionPlan& plan, const PreviewProfile& profile,
                             const PreviewHeader& header = {});
// Stable schema (docs/cli.md): {"model", "profile", "policy", "islands": [{"id", "delegate", "nodes", "ops",
// "input_bytes", "output_bytes", "commands": {"dispatches", "copies", "barriers"} (device islands of a compiled program)}], "handoffs": [{"value", "from", "to", "bytes", "kind", "layout"}], "pruned": [...],
// "nodes": [{"name", "op", "delegate", "pass", "reason"}], "coverage": {delegate: nodes}, "unsupported": {...},
// "memory": [{"domain", "planned_bytes", "lower_bound", "buffers"}] (with a compiled program)}
std::string format_plan_json(const Graph& graph, const PartitionPlan& plan, const PreviewProfile& profile,
                             const PreviewHeader& header = {});
std::string format_plan_dot(const Graph& graph, const PartitionPlan& plan);

// `s` padded with spaces to `width` columns (bytes); longer strings unchanged.
std::string pad(std::string s, size_t width);
// "768 B", "1.5 KiB", "3.2 MiB".
std::string format_bytes(size_t bytes);
// JSON string literal with escapes.
std::string json_quote(std::string_view s);

}  // namespace hetsched
