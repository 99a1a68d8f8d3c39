// Printing a PartitionPlan: the text table, JSON and Graphviz DOT that
// `hetsched preview` shows.
#pragma once

#include <string>

#include "graph/graph.h"
#include "partitioner/partition_plan.h"
#include "profile/profile.h"

namespace hetsched {

struct PreviewHeader {
  std::string context_line;  // "vgf_vk_unified_e2e:7 → llvmpipe · shared by vgf, vulkan"; empty when no GPU
};

std::string format_plan_text(const Graph& graph, const PartitionPlan& plan, const Profile& profile,
                             const PreviewHeader& header = {});
// Stable schema (docs/cli.md): {"model", "profile", "policy", "islands": [{"id", "delegate", "nodes", "ops",
// "input_bytes", "output_bytes"}], "handoffs": [{"value", "from", "to", "bytes"}], "pruned": [...],
// "nodes": [{"name", "op", "delegate", "pass", "reason"}], "coverage": {delegate: nodes}, "unsupported": {...}}
std::string format_plan_json(const Graph& graph, const PartitionPlan& plan, const Profile& profile);
std::string format_plan_dot(const Graph& graph, const PartitionPlan& plan);

// "768 B", "1.5 KiB", "3.2 MiB".
std::string format_bytes(size_t bytes);
// JSON string literal with escapes.
std::string json_quote(std::string_view s);

}  // namespace hetsched
