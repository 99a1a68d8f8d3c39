// A constant index list (a Gather's indices, flattened) as strided runs:
// each run is what one TOSA slice reads along the gathered axis, so a Gather
// of constant indices lowers to one slice per run and a concat of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetsched::vgf {

// `count` elements from `start`, `stride` apart (stride ≠ 0; 1 for a run of
// one element).
struct IndexRun {
  int64_t start = 0;
  int64_t count = 0;
  int64_t stride = 1;
};

// Splits `indices` (each already in [0, dim)) greedily, in order, into
// maximal runs of a constant nonzero step: [0..767] is one run, torch's
// as_strided of a contiguous view one run, a repeated index starts a new run.
std::vector<IndexRun> index_runs(const std::vector<int64_t>& indices);

}  // namespace hetsched::vgf
