#include "delegates/vgf/index_runs.h"

namespace hetsched::vgf {

std::vector<IndexRun> index_runs(const std::vector<int64_t>& indices) {
  std::vector<IndexRun> runs;
  std::size_t p = 0;
  while (p < indices.size()) {
    IndexRun run{indices[p], 1, 1};
    if (p + 1 < indices.size() && indices[p + 1] != indices[p]) {
      run.stride = indices[p + 1] - indices[p];
      while (p + run.count < indices.size() && indices[p + run.count] - indices[p + run.count - 1] == run.stride)
        ++run.count;
    }
    runs.push_back(run);
    p += static_cast<std::size_t>(run.count);
  }
  return runs;
}

}  // namespace hetsched::vgf
