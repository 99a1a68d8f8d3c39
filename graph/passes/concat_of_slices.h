// Recognises a Concat whose inputs are all Slices of one tensor along the
// Concat's axis, as exporters write torch.roll (Swin's shifted windows:
// Slice(x, -s:) and Slice(x, :-s) concatenated, once per rolled axis), and
// writes it as one Gather of x along that axis with the slices' indices
// end to end: one pass over the tensor where the Slices and the Concat made
// two (on the CPU delegate's portable kernels, Swin-T's 58 Slices and 23
// Concats took 4.7 of 50 ms at 2 threads on the 2-core Xeon).
#pragma once

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Before: `graph` is valid with its value types known. Rewrites every
// Concat whose inputs are each the output of a Slice of the same static
// tensor along the Concat's axis alone (graph/slice_window.h: constant
// bounds, step 1, the other dims whole), read by that Concat alone and no
// graph output, into a Gather of that tensor with constant int64 indices, which
// writes the Concat's output value; the Slices go. Returns the number of
// Concats rewritten.
Result<int> concat_of_slices_to_gather(Graph& graph);

}  // namespace hetsched
