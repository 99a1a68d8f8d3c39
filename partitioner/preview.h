// Printing a PartitionPlan: the text table, JSON and Graphviz DOT that
// `hetsched preview` shows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "partitioner/partition_plan.h"
#include "profile/profile.h"

namespace hetsched {

// A handoff as the compiled program does it (scheduler/program_preview.h).
struct PreviewHandoff {
  std::string value, from, to;
  std::string kind;    // "upload", "readback", "device copy", "layout conversion", "alias"
  std::string layout;  // "" or "NCHW->NHWC"
  uint64_t bytes = 0;
};

// What the preview shows beyond the partition, from the compiled program.
struct PreviewHeader {
  std::string context_line;  // "vgf_vk_unified_e2e:7 → llvmpipe · shared by vgf, vulkan"; empty when no GPU
  // The program's handoff steps; without a program, derived from the plan's cut edges.
  std::optional<std::vector<PreviewHandoff>> handoffs;
  std::string memory_text;  // appended as is to the text
  std::string memory_json;  // a JSON value, emitted as "memory" when not empty
};

std::string format_plan_text(const Graph& graph, const PartitionPlan& plan, const Profile& profile,
                             const PreviewHeader& header = {});
// Stable schema (docs/cli.md): {"model", "profile", "policy", "islands": [{"id", "delegate", "nodes", "ops",
// "input_bytes", "output_bytes"}], "handoffs": [{"value", "from", "to", "bytes", "kind", "layout"}], "pruned": [...],
// "nodes": [{"name", "op", "delegate", "pass", "reason"}], "coverage": {delegate: nodes}, "unsupported": {...},
// "memory": [{"domain", "planned_bytes", "lower_bound", "buffers"}] (with a compiled program)}
std::string format_plan_json(const Graph& graph, const PartitionPlan& plan, const Profile& profile,
                             const PreviewHeader& header = {});
std::string format_plan_dot(const Graph& graph, const PartitionPlan& plan);

// `s` padded with spaces to `width` columns (bytes); longer strings unchanged.
std::string pad(std::string s, size_t width);
// "768 B", "1.5 KiB", "3.2 MiB".
std::string format_bytes(size_t bytes);
// JSON string literal with escapes.
std::string json_quote(std::string_view s);

}  // namespace hetsched
