// Models on which a fixed partition order is wrong, for `partition.prefer:
// auto` and `hetsched bench --compare-policies`. Each mixes ops the GPU
// delegates take with LeakyRelu, which neither the Vulkan nor the VGF
// delegate implements (the CPU runs it on XNNPACK, cheaply), so any GPU-first
// order cuts the model into CPU and GPU islands.
#pragma once

#include <cstdint>

#include "graph/graph.h"

namespace hetsched::examples {

struct TinyIslandsOptions {
  int64_t channels = 32;
  int64_t size = 128;  // input 1 × channels × size × size: 2 MiB of f32 by default
  int repeats = 10;
};

// x → repeats × (LeakyRelu → Add per-channel bias → Relu) → y. Under
// vulkan_first or vgf_first every Add+Relu pair is a GPU island of its own
// between two CPU islands: each moves the whole tensor up and back for a few
// microseconds of work, so the all-CPU plan (cpu_first) is the fastest.
Result<Graph> make_tiny_islands(const TinyIslandsOptions& options);

struct GpuHeavyOpOptions {
  int64_t channels = 128;
  int64_t size = 112;  // input 1 × channels × size × size
  int convs = 2;       // 3×3 Convs (stride 1, pad 1): ~3.7 GFLOP each by default
};

// x → LeakyRelu → convs × (Conv3x3 + bias → LeakyRelu) → y: cheap
// CPU-only ops around a few expensive Convs. cpu_first keeps the Convs on
// the CPU; on a real GPU they are many times faster there, which pays for
// moving the tensor both ways (on lavapipe the CPU may still win).
Result<Graph> make_gpu_heavy_op(const GpuHeavyOpOptions& options);

}  // namespace hetsched::examples
