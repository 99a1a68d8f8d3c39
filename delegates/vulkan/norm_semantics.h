// LayerNormalization and GroupNormalization as the Vulkan delegate runs
// them: `rows` rows of `inner` contiguous elements, each normalised by its
// own mean and variance, then scaled and shifted by a row of a parameter
// table. The rules are ONNX's, read through graph/ops_norm.h as shape
// inference and the CPU kernels read them.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched::vulkan {

struct Normalization {
  int64_t rows = 1;
  int64_t inner = 1;
  // Row r is scaled by table row r % param_rows: 1 for LayerNormalization
  // (Scale and B broadcast over the normalised dims), the group count for
  // GroupNormalization (each group's channels, per channel or per group).
  int64_t param_rows = 1;
  float epsilon = 1e-5f;
  // param_rows rows of scales, then param_rows rows of biases, inner each.
  std::vector<float> table;
};

// kUnsupported unless Scale and B are constants (they are weights in every
// exported model) and stash_type is float.
Result<Normalization> read_normalization(const Graph& graph, NodeId node);

}  // namespace hetsched::vulkan
