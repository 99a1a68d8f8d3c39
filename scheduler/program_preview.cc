#include "scheduler/program_preview.h"

#include <cstdio>
#include <sstream>

namespace hetsched {

std::vector<PreviewHandoff> program_handoffs(const Program& program) {
  std::vector<PreviewHandoff> out;
  for (const ProgramStep& step : program.steps) {
    if (step.kind != StepKind::kHandoff || step.handoff == HandoffKind::kHostCopy) continue;
    const ProgramTensor& t = program.tensors[step.tensor];
    std::string kind(handoff_kind_name(step.handoff));
    if (step.handoff == HandoffKind::kDeviceCopy && !step.layout.empty()) kind = "layout conversion";
    out.push_back({t.name, step.from, step.to, kind, step.layout, t.type.is_static() ? t.type.byte_size() : 0});
  }
  return out;
}

Result<std::vector<PreviewCommands>> program_commands(const Program& program, const DelegateSet& delegates) {
  std::vector<PreviewCommands> out;
  for (const ProgramIsland& island : program.islands) {
    const Delegate* d = delegates.find(island.delegate);
    if (!d || d->memory_kind() != MemoryDomain::Kind::kDevice) continue;
    Result<CommandStreamCounts> counts = d->command_stream(island.blob, island.compile_specs);
    if (!counts.is_ok())
      return counts.status().with_context("failed to count the commands of island " + std::to_string(island.id) + ": ");
    out.push_back({island.id, counts->dispatches, counts->copies, counts->barriers});
  }
  return out;
}

std::string format_memory_text(const MemoryPlan& plan) {
  std::ostringstream out;
  out << "\nmemory (one arena per domain and request in flight)\n";
  out << " domain                    planned     lower bound  ratio  buffers\n";
  for (const DomainPlan& d : plan.domains) {
    char ratio[16];
    if (d.lower_bound > 0)
      std::snprintf(ratio, sizeof ratio, "%.2f", static_cast<double>(d.planned_bytes) / static_cast<double>(d.lower_bound));
    else
      std::snprintf(ratio, sizeof ratio, "%s", d.planned_bytes == 0 ? "-" : "inf");
    out << " " << pad(d.domain + " ", 26) << pad(format_bytes(d.planned_bytes) + " ", 12)
        << pad(format_bytes(d.lower_bound) + " ", 13) << pad(ratio, 7) << d.buffers.size() << "\n";
  }
  return out.str();
}

std::string format_memory_json(const MemoryPlan& plan) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < plan.domains.size(); ++i) {
    const DomainPlan& d = plan.domains[i];
    out << (i ? ", " : "") << "{\"domain\": " << json_quote(d.domain) << ", \"planned_bytes\": " << d.planned_bytes
        << ", \"lower_bound\": " << d.lower_bound << ", \"buffers\": " << d.buffers.size() << "}";
  }
  out << "]";
  return out.str();
}

}  // namespace hetsched
