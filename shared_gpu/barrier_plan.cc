#include "shared_gpu/barrier_plan.h"

#include <algorithm>

namespace hetsched::gpu {

namespace {

struct Written {
  ByteRange range;
  int write_group;
};

bool hazard(const StepAccess& step, const std::vector<ByteRange>& read, const std::vector<Written>& written) {
  for (const ByteRange& r : step.reads)
    for (const Written& w : written)
      if (r.overlaps(w.range)) return true;
  for (const ByteRange& w : step.writes) {
    for (const ByteRange& r : read)
      if (w.overlaps(r)) return true;
    for (const Written& prev : written) {
      if (!w.overlaps(prev.range)) continue;
      const bool disjoint_pieces = step.write_group >= 0 && prev.write_group == step.write_group && w == prev.range;
      if (!disjoint_pieces) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<bool> plan_barriers(std::span<const StepAccess> steps) {
  std::vector<bool> barrier_before(steps.size(), false);
  std::vector<ByteRange> read;   // since the last barrier
  std::vector<Written> written;  // since the last barrier
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepAccess& step = steps[i];
    if (hazard(step, read, written)) {
      barrier_before[i] = true;
      read.clear();
      written.clear();
    }
    read.insert(read.end(), step.reads.begin(), step.reads.end());
    for (const ByteRange& w : step.writes) written.push_back({w, step.write_group});
  }
  return barrier_before;
}

size_t count_barriers(const std::vector<bool>& barrier_before) {
  return static_cast<size_t>(std::count(barrier_before.begin(), barrier_before.end(), true));
}

}  // namespace hetsched::gpu
