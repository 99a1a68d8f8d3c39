// A ResNet-style stack of basic blocks (conv3x3+bias → relu → conv3x3+bias →
// add skip → relu), with seeded random weights: the conv-heavy workload of
// the benchmarks.
#pragma once

#include <cstdint>

#include "graph/graph.h"
#include "graph/tensor.h"

namespace hetsched::examples {

struct ResnetStackOptions {
  int blocks = 4;
  int64_t channels = 64;
  int64_t size = 56;  // input is 1 × channels × size × size
};

Result<Graph> make_resnet_stack(const ResnetStackOptions& options);
// Uniform in [-scale, scale), reproducible from `seed`.
Tensor seeded_tensor(const Shape& shape, uint32_t seed, float scale);

}  // namespace hetsched::examples
