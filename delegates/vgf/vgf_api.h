// The VGF engine's public header for tools (the CLI's export-vgf and
// run-vgf): what a .vgf file holds, as plain values, without the container's
// internals (vgf_format.h, tosa_ops.h). A VGF delegate's compiled blob IS a
// .vgf file, so a tool runs one by init()-ing it on the registry's "vgf"
// delegate (delegates/registry.h) through the delegate contract.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched::vgf {

// One island input or output of a VGF file.
struct VgfTensorInfo {
  std::string name;
  TensorType type;                            // f32 or f16, in the graph's own (NCHW) shape
  TensorLayout layout = TensorLayout::kNchw;  // its layout in device memory
};

struct VgfSummary {
  std::vector<VgfTensorInfo> inputs;   // in the island's input order
  std::vector<VgfTensorInfo> outputs;  // in the island's output order
  size_t op_count = 0;                 // TOSA operators over all graph modules
  // In segment order: each graph segment's operators by TOSA name ("conv2d",
  // ...), and "compute:<module>" for each compute segment.
  std::vector<std::string> ops;
};

// Decodes and verifies `blob` as decode_vgf does (same checks, same errors:
// kDataLoss for corrupt bytes, kUnsupported for a newer version).
Result<VgfSummary> describe_vgf(const Blob& blob);

}  // namespace hetsched::vgf
