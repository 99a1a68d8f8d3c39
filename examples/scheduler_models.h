// Models that show what the resource scheduler does, with seeded random
// weights. Each mixes Conv + Relu with ConvTranspose, which a profile pins
// to the CPU (`pin: [{op: ConvTranspose, delegate: cpu}]`; the Vulkan
// delegate runs ConvTranspose too since issue 11), so they partition into
// CPU and GPU islands of tunable cost.
#pragma once

#include <cstdint>

#include "graph/graph.h"

namespace hetsched::examples {

struct SchedulerModelOptions {
  int64_t channels = 32;
  int64_t size = 32;    // input is 1 × channels × size × size
  int gpu_layers = 4;   // Conv3x3 + Relu layers on the GPU branch/stage
  int cpu_layers = 2;   // ConvTranspose3x3 (stride 1) layers on the CPU branch/stage
};

// x → [gpu_layers × (Conv, Relu)] → y_gpu, and independently
// x → [cpu_layers × ConvTranspose] → y_cpu: two outputs, two branches that
// can run at the same time. A branch with 0 layers is left out (to time the
// other alone).
Result<Graph> make_parallel_branches(const SchedulerModelOptions& options);

// x → cpu_layers × ConvTranspose → gpu_layers × (Conv, Relu) →
// cpu_layers × ConvTranspose → y: a CPU → GPU → CPU chain, for pipelining
// requests.
Result<Graph> make_cpu_gpu_cpu(const SchedulerModelOptions& options);

}  // namespace hetsched::examples
