// The profile's limits (Limits, profile.h) applied at load: a model whose
// tensors or arenas exceed them is refused with one line naming the tensor
// or domain and both sizes, before anything that size is allocated (a
// 1024^4 f32 input once ended `hetsched run` in std::bad_alloc).
#pragma once

#include <cstdint>
#include <string>

#include "graph/graph.h"
#include "hetsched/status.h"
#include "profile/profile.h"
#include "scheduler/program.h"

namespace hetsched {

// This machine's physical memory in bytes (the limits' default).
uint64_t machine_memory_bytes();

// Every value of `graph` whose type is known: its size computed with overflow
// checks, at most limits.max_tensor_bytes.
Status check_tensor_limits(const Graph& graph, const Limits& limits);
// A program's tensors, and each memory domain's planned arena, against the limits.
Status check_program_limits(const Program& program, const Limits& limits);

// "4.0 TiB", "23.4 GiB", "512 B".
std::string format_byte_count(double bytes);

}  // namespace hetsched
