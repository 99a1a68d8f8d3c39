#include "partitioner/preview.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace hetsched {

std::string format_bytes(size_t bytes) {
  char buf[32];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  } else if (bytes < 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  }
  return buf;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

namespace {

std::string endpoint(const PartitionPlan& plan, int island) {
  if (island < 0) return "host";
  return plan.islands[island].delegate + "#" + std::to_string(island);
}

bool on_device(const PartitionPlan& plan, int island) {
  if (island < 0) return false;
  const auto& d = plan.device_delegates;
  return std::find(d.begin(), d.end(), plan.islands[island].delegate) != d.end();
}

// What the executor will do for a cut edge (the program's handoff steps).
std::string handoff_kind(const PartitionPlan& plan, const CutEdge& e) {
  const bool from = on_device(plan, e.from_island), to = on_device(plan, e.to_island);
  if (from && to) return "device copy";
  if (to) return "upload";
  if (from) return "readback";
  return "host";
}

// The program's handoffs when the header has them, else the cut edges.
// With a prediction, each carries the cost model's time for its cut edge
// (matched by value and destination).
std::vector<PreviewHandoff> handoffs_of(const Graph& graph, const PartitionPlan& plan, const PreviewHeader& header) {
  std::vector<PreviewHandoff> out;
  if (header.handoffs) {
    out = *header.handoffs;
  } else {
    for (const auto& e : plan.edges)
      out.push_back({graph.value(e.value).name, endpoint(plan, e.from_island), endpoint(plan, e.to_island),
                     handoff_kind(plan, e), "", e.bytes});
  }
  if (plan.predicted_ms <= 0) return out;
  // A program's readback goes to "host" where the plan's edge names the
  // host island that reads it (cpu#2).
  const auto same_end = [&](const CutEdge& e, const std::string& to) {
    return endpoint(plan, e.to_island) == to || (to == "host" && !on_device(plan, e.to_island));
  };
  for (PreviewHandoff& h : out)
    for (const auto& e : plan.edges)
      if (graph.value(e.value).name == h.value && same_end(e, h.to))
        h.predicted_ms = std::max(h.predicted_ms, e.predicted_ms);
  for (PreviewHandoff& h : out) h.predicted_ms = std::max(h.predicted_ms, 0.0);
  return out;
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// Op types of an island, in first-seen order, de-duplicated.
std::vector<std::string> island_ops(const Graph& graph, const PlannedIsland& island) {
  std::vector<std::string> ops;
  std::set<std::string> seen;
  for (NodeId n : island.nodes)
    if (seen.insert(graph.node(n).op).second) ops.push_back(graph.node(n).op);
  return ops;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::map<std::string, int> coverage(const PartitionPlan& plan) {
  std::map<std::string, int> c;
  for (const auto& d : plan.order) c[d] = 0;
  for (const auto& n : plan.nodes) c[n.delegate]++;
  return c;
}


// One line per shared GPU context the plan's delegates use:
// "vgf_vk_unified_e2e:7 (lookup_or_create) · shared by vgf, vulkan · device auto".
std::vector<std::string> gpu_context_lines(const PreviewProfile& profile, const PartitionPlan& plan) {
  std::map<std::string, std::vector<std::string>> users;
  std::map<std::string, std::string> detail;
  for (const auto& island : plan.islands) {
    auto it = profile.gpu_contexts.find(island.delegate);
    if (it == profile.gpu_contexts.end()) continue;
    const PreviewProfile::GpuContext& k = it->second;
    const std::string key = k.shared ? k.token + ":" + std::to_string(k.group) : island.delegate + " (private)";
    auto& u = users[key];
    if (std::find(u.begin(), u.end(), island.delegate) == u.end()) u.push_back(island.delegate);
    detail[key] = k.mode + ", device " + k.device;
  }
  std::vector<std::string> lines;
  for (const auto& [key, who] : users)
    lines.push_back(key + " (" + detail[key] + ") · " + (who.size() > 1 ? "shared by " : "used by ") + join(who, ", "));
  return lines;
}

}  // namespace

std::string format_plan_text(const Graph& graph, const PartitionPlan& plan, const PreviewProfile& profile,
                             const PreviewHeader& header) {
  std::ostringstream out;
  std::string inputs;
  for (ValueId v : graph.inputs())
    inputs += (inputs.empty() ? "" : ", ") + graph.value(v).name + " " + graph.value(v).type.to_string();
  out << "model    " << graph.name() << " (" << graph.num_nodes() << " nodes, input" << (graph.inputs().size() > 1 ? "s " : " ")
      << inputs << ")\n";
  out << "profile  " << profile.name << " · policy " << plan.policy;
  if (!plan.policy_note.empty()) out << " (" << plan.policy_note << ")";
  out << " · order " << join(plan.order, ", ") << " · min partition " << profile.min_partition_size
      << " · sync " << profile.sync << "\n";
  if (!header.context_line.empty()) out << "context  " << header.context_line << "\n";
  for (const std::string& line : gpu_context_lines(profile, plan)) out << "context  " << line << "\n";
  // The ops column is as wide as its longest entry, up to kMaxOpsWidth.
  constexpr size_t kMaxOpsWidth = 64;
  std::vector<std::string> ops_text;
  size_t ops_width = 3;
  for (const auto& island : plan.islands) {
    std::string ops = join(island_ops(graph, island), ", ");
    if (ops.size() > kMaxOpsWidth) ops = ops.substr(0, kMaxOpsWidth - 3) + "...";
    ops_width = std::max(ops_width, ops.size());
    ops_text.push_back(std::move(ops));
  }
  const bool predicted = plan.predicted_ms > 0;
  out << "\n #  delegate  nodes  " << pad("ops", ops_width + 2) << pad("in", 10) << (predicted ? pad("out", 10) + "predicted ms (start)" : "out") << "\n";
  for (size_t i = 0; i < plan.islands.size(); ++i) {
    const auto& island = plan.islands[i];
    out << " " << pad(std::to_string(island.id), 3) << pad(island.delegate, 10)
        << pad(std::to_string(island.nodes.size()), 7) << pad(ops_text[i], ops_width + 2)
        << pad(format_bytes(island.input_bytes), 10);
    if (predicted)
      out << pad(format_bytes(island.output_bytes), 10) << ms(island.predicted_ms) << " (" << ms(island.predicted_start_ms) << ")";
    else
      out << format_bytes(island.output_bytes);
    out << "\n";
  }
  if (!header.commands.empty()) {
    // What each GPU island's one command buffer runs: dispatch and barrier
    // counts are most of a small model's GPU time on a fast device.
    out << "\ngpu commands (per island, as recorded)\n";
    uint64_t dispatches = 0, barriers = 0;
    for (const PreviewCommands& c : header.commands) {
      out << " " << pad(endpoint(plan, c.island), 12) << "dispatches " << c.dispatches << " · barriers " << c.barriers;
      if (c.copies > 0) out << " · copies " << c.copies;
      out << "\n";
      dispatches += c.dispatches;
      barriers += c.barriers;
    }
    if (header.commands.size() > 1) out << " " << pad("total", 12) << "dispatches " << dispatches << " · barriers " << barriers << "\n";
  }
  out << "\nhandoffs\n";
  for (const PreviewHandoff& h : handoffs_of(graph, plan, header)) {
    const std::string kind = h.layout.empty() || h.kind == "layout conversion" ? h.kind : h.kind + " " + h.layout;
    out << " " << pad(h.from + " → " + h.to, 22) << pad(format_bytes(h.bytes), 10) << pad(kind, 21)
        << (predicted ? pad(ms(h.predicted_ms) + " ms", 12) : "") << h.value
        << (h.kind == "layout conversion" ? " (" + h.layout + ")" : "") << "\n";
  }
  if (!plan.pruned.empty()) {
    out << "\npruned\n";
    for (const auto& p : plan.pruned)
      out << " " << p.delegate << " island of " << p.compute_nodes << " compute node(s) < min " << p.min_size << " → "
          << p.went_to << "\n";
  }
  out << "\ncoverage ";
  std::string cov;
  for (const auto& [d, n] : coverage(plan))
    cov += (cov.empty() ? " " : " · ") + d + " " + std::to_string(n) + "/" + std::to_string(graph.num_nodes());
  out << cov << "\n";
  for (const auto& [d, lines] : plan.unsupported) out << "not on " << d << ": " << join(lines, "; ") << "\n";
  if (predicted) {
    out << "\npredicted  " << ms(plan.predicted_ms) << " ms per request · costs: " << plan.cost_source << "\n";
    if (!plan.candidates.empty()) {
      std::string c;
      for (const auto& [name, t] : plan.candidates) c += (c.empty() ? "" : " · ") + name + " " + ms(t);
      out << "considered " << c << " (ms)\n";
    }
  }
  out << header.memory_text;
  return out.str();
}

std::string format_plan_json(const Graph& graph, const PartitionPlan& plan, const PreviewProfile& profile,
                             const PreviewHeader& header) {
  std::ostringstream out;
  out << "{\n  \"model\": " << json_quote(graph.name()) << ",\n  \"profile\": " << json_quote(profile.name)
      << ",\n  \"policy\": " << json_quote(plan.policy) << ",\n  \"order\": [";
  for (size_t i = 0; i < plan.order.size(); ++i) out << (i ? ", " : "") << json_quote(plan.order[i]);
  out << "],\n  \"islands\": [";
  for (size_t i = 0; i < plan.islands.size(); ++i) {
    const auto& island = plan.islands[i];
    out << (i ? "," : "") << "\n    {\"id\": " << island.id << ", \"delegate\": " << json_quote(island.delegate)
        << ", \"nodes\": [";
    for (size_t k = 0; k < island.nodes.size(); ++k) out << (k ? ", " : "") << json_quote(graph.node(island.nodes[k]).name);
    out << "], \"ops\": [";
    const auto ops = island_ops(graph, island);
    for (size_t k = 0; k < ops.size(); ++k) out << (k ? ", " : "") << json_quote(ops[k]);
    out << "], \"input_bytes\": " << island.input_bytes << ", \"output_bytes\": " << island.output_bytes;
    if (plan.predicted_ms > 0)
      out << ", \"predicted_ms\": " << island.predicted_ms << ", \"predicted_start_ms\": " << island.predicted_start_ms;
    for (const PreviewCommands& c : header.commands)
      if (c.island == island.id)
        out << ", \"commands\": {\"dispatches\": " << c.dispatches << ", \"copies\": " << c.copies
            << ", \"barriers\": " << c.barriers << "}";
    out << "}";
  }
  out << "\n  ],\n  \"handoffs\": [";
  const std::vector<PreviewHandoff> handoffs = handoffs_of(graph, plan, header);
  for (size_t i = 0; i < handoffs.size(); ++i) {
    const PreviewHandoff& h = handoffs[i];
    out << (i ? "," : "") << "\n    {\"value\": " << json_quote(h.value) << ", \"from\": " << json_quote(h.from)
        << ", \"to\": " << json_quote(h.to) << ", \"bytes\": " << h.bytes << ", \"kind\": " << json_quote(h.kind)
        << ", \"layout\": " << json_quote(h.layout);
    if (h.predicted_ms >= 0) out << ", \"predicted_ms\": " << h.predicted_ms;
    out << "}";
  }
  out << "\n  ],\n  \"pruned\": [";
  for (size_t i = 0; i < plan.pruned.size(); ++i) {
    const auto& p = plan.pruned[i];
    out << (i ? "," : "") << "\n    {\"delegate\": " << json_quote(p.delegate) << ", \"nodes\": [";
    for (size_t k = 0; k < p.nodes.size(); ++k) out << (k ? ", " : "") << json_quote(graph.node(p.nodes[k]).name);
    out << "], \"compute_nodes\": " << p.compute_nodes << ", \"min_partition_size\": " << p.min_size
        << ", \"went_to\": " << json_quote(p.went_to) << "}";
  }
  out << "\n  ],\n  \"nodes\": [";
  for (size_t n = 0; n < plan.nodes.size(); ++n) {
    const auto& a = plan.nodes[n];
    out << (n ? "," : "") << "\n    {\"name\": " << json_quote(graph.node(static_cast<NodeId>(n)).name)
        << ", \"op\": " << json_quote(graph.node(static_cast<NodeId>(n)).op) << ", \"delegate\": " << json_quote(a.delegate)
        << ", \"island\": " << a.island << ", \"pass\": " << json_quote(assign_pass_name(a.pass))
        << ", \"reason\": " << json_quote(a.reason) << "}";
  }
  out << "\n  ],\n  \"coverage\": {";
  bool first = true;
  for (const auto& [d, n] : coverage(plan)) {
    out << (first ? "" : ", ") << json_quote(d) << ": " << n;
    first = false;
  }
  out << "},\n  \"unsupported\": {";
  for (size_t i = 0; i < plan.unsupported.size(); ++i) {
    out << (i ? ", " : "") << json_quote(plan.unsupported[i].first) << ": [";
    for (size_t k = 0; k < plan.unsupported[i].second.size(); ++k)
      out << (k ? ", " : "") << json_quote(plan.unsupported[i].second[k]);
    out << "]";
  }
  out << "}";
  if (plan.predicted_ms > 0) {
    out << ",\n  \"predicted_ms\": " << plan.predicted_ms << ",\n  \"cost_source\": " << json_quote(plan.cost_source)
        << ",\n  \"candidates\": [";
    for (size_t i = 0; i < plan.candidates.size(); ++i)
      out << (i ? ", " : "") << "{\"plan\": " << json_quote(plan.candidates[i].first)
          << ", \"predicted_ms\": " << plan.candidates[i].second << "}";
    out << "]";
  }
  if (!header.memory_json.empty()) out << ",\n  \"memory\": " << header.memory_json;
  out << "\n}\n";
  return out.str();
}

std::string format_plan_dot(const Graph& graph, const PartitionPlan& plan) {
  static const std::map<std::string, std::string> kColors = {
      {"cpu", "#cfe2f3"}, {"vulkan", "#f4cccc"}, {"vgf", "#d9ead3"}};
  std::ostringstream out;
  out << "digraph " << json_quote(graph.name()) << " {\n  rankdir=TB;\n  node [shape=box, style=filled];\n";
  for (const auto& island : plan.islands) {
    auto it = kColors.find(island.delegate);
    const std::string color = it == kColors.end() ? "#eeeeee" : it->second;
    out << "  subgraph cluster_" << island.id << " {\n    label=" << json_quote(island.delegate + " #" + std::to_string(island.id))
        << ";\n    style=filled; color=" << json_quote(color) << ";\n";
    for (NodeId n : island.nodes)
      out << "    n" << n << " [label=" << json_quote(graph.node(n).name + "\\n" + graph.node(n).op)
          << ", fillcolor=white];\n";
    out << "  }\n";
  }
  for (ValueId v : graph.inputs()) out << "  v" << v << " [label=" << json_quote(graph.value(v).name) << ", shape=ellipse, fillcolor=white];\n";
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    for (ValueId in : graph.node(n).inputs) {
      if (in == kNoValue || graph.value(in).is_constant()) continue;
      const NodeId p = graph.value(in).producer;
      const std::string from = p == kNoNode ? "v" + std::to_string(in) : "n" + std::to_string(p);
      const bool cut = p == kNoNode || plan.nodes[p].island != plan.nodes[n].island;
      out << "  " << from << " -> n" << n;
      if (cut) out << " [label=" << json_quote(format_bytes(graph.value(in).type.byte_size())) << ", penwidth=2]";
      out << ";\n";
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace hetsched
