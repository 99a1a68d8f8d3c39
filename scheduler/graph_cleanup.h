// The clean-ups the model loader runs on an imported graph, in order.
#pragma once

#include "graph/graph.h"
#include "graph/shape_inference.h"
#include "hetsched/status.h"

namespace hetsched {

// What each pass changed, for logs and tests.
struct CleanupStats {
  int folded = 0;              // nodes evaluated into constants
  int einsums_lowered = 0;     // Einsums rewritten as MatMul and friends (lower_einsum.h)
  int identities_removed = 0;  // Identity / Dropout nodes removed
  int conv_taps_cropped = 0;   // convs whose kernel lost taps that read only padding (crop_conv_taps.h)
  int batch_norms_folded = 0;  // BatchNormalization folded into Conv
  int affine_folded = 0;       // Mul/Add/Sub/Div by constants folded into Conv
  int hard_swishes_fused = 0;  // elementwise HardSwish patterns made one node
  int input_affine_folded = 0; // Mul/Add/Sub/Div by constants folded into the unpadded Conv after them
  int activations_fused = 0;   // activations fused into Conv
  int dead_removed = 0;        // nodes nothing reads
};

// Before: `graph` is valid, unsupported nodes excluded (load_onnx). Passes:
//  1. apply `input_shapes`; every input must end up static.
//  2. fold constants with the portable CPU kernels (shape sub-graphs
//     collapse into constants; every remaining node gets its types).
//  3. remove Identity and inference Dropout nodes.
//  4. fold BatchNormalization into the Conv before it.
//  5. fold per-channel Mul/Add/Sub/Div by constants into the Conv before
//     them (fold_conv_affine.h).
//  6. rewrite x * Clip(x + 3, 0, 6) / 6 and x * HardSigmoid(x) into
//     HardSwish (fuse_hard_swish.h).
//  7. fold per-channel Mul/Add/Sub/Div by constants into the unpadded Conv
//     that reads them (fold_input_affine.h).
//  8. fuse activations into the Conv before them (after 4-7, so that
//     Conv → BN → Mul → Add → HardSwish fuses all of them).
//  9. remove nodes nothing reads.
// After: the graph is ready for check_graph, with the same outputs (names
// included) and the same results up to float rounding.
Result<CleanupStats> cleanup_graph(Graph& graph, const InputShapes& input_shapes);

}  // namespace hetsched
