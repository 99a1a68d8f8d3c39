#include "scheduler/limits.h"

#include <unistd.h>

#include <cstdio>

namespace hetsched {

namespace {

uint64_t effective(uint64_t limit) { return limit ? limit : machine_memory_bytes(); }

std::string limit_text(uint64_t limit, const char* key) {
  return std::string(key) + " (" + format_byte_count(static_cast<double>(effective(limit))) +
         (limit ? ")" : ", this machine's memory)");
}

Status check_type(const std::string& what, const TensorType& type, uint64_t limit) {
  if (!type.is_static()) return Status::ok();
  const std::optional<size_t> bytes = checked_byte_size(type);
  if (!bytes)
    return invalid_argument("failed to load model: " + what + " is " + type.to_string() +
                            ", more bytes than 2^64 (a corrupt or mistyped shape?)");
  if (*bytes > effective(limit))
    return invalid_argument("failed to load model: " + what + " is " + type.to_string() + " (" +
                            format_byte_count(static_cast<double>(*bytes)) + "), over limits." +
                            limit_text(limit, "max_tensor_bytes"));
  return Status::ok();
}

}  // namespace

uint64_t machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : UINT64_MAX;
}

std::string format_byte_count(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

Status check_tensor_limits(const Graph& graph, const Limits& limits) {
  for (const Value& v : graph.values())
    if (v.type_known) HS_RETURN_IF_ERROR(check_type("tensor '" + v.name + "'", v.type, limits.max_tensor_bytes));
  return Status::ok();
}

Status check_program_limits(const Program& program, const Limits& limits) {
  for (const ProgramTensor& t : program.tensors)
    HS_RETURN_IF_ERROR(check_type("tensor '" + t.name + "'", t.type, limits.max_tensor_bytes));
  for (const auto& domain : program.memory.domains)
    if (domain.planned_bytes > effective(limits.max_arena_bytes))
      return invalid_argument("failed to load model: the " + domain.domain + " arena of one request is " +
                              format_byte_count(static_cast<double>(domain.planned_bytes)) + ", over limits." +
                              limit_text(limits.max_arena_bytes, "max_arena_bytes"));
  return Status::ok();
}

}  // namespace hetsched
