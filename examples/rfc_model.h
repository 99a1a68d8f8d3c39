// The RFC's UnifiedVgfVulkanModel, built with the GraphBuilder: the bundled
// example model.
//
//   x f32[1,3,8,8]
//   Transpose(perm 0,1,3,2) → AveragePool(2x2, stride 2)        VGF-friendly prefix
//   Gather(axis 1, [2,0,1]) → GatherElements(axis 3) → Gather(axis 2, [3,1,2,0])
//   Sin, Cos → Reciprocal(cos) → Mul(sin, 1/cos) → Transpose(0,1,3,2)
#pragma once

#include "graph/graph.h"
#include "graph/tensor.h"

namespace hetsched::examples {

Result<Graph> make_rfc_model();
// The RFC's example input: linspace(-0.8, 0.8, 192) reshaped to 1x3x8x8.
Tensor rfc_model_input();

}  // namespace hetsched::examples
