#include "graph/slice_window.h"

#include <algorithm>
#include <numeric>

#include "graph/op_schema.h"

namespace hetsched {

Result<SliceWindow> read_slice(const Graph& graph, const Node& n) {
  const Shape& in = graph.value(n.inputs[0]).type.shape;
  const size_t rank = in.size();
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false, has_steps = false;
  if (graph.opset() < 10) {
    HS_ASSIGN_OR_RETURN(starts, n.attrs.require_ints("starts"));
    HS_ASSIGN_OR_RETURN(ends, n.attrs.require_ints("ends"));
    has_axes = n.attrs.has("axes");
    HS_ASSIGN_OR_RETURN(axes, n.attrs.get_ints("axes", {}));
  } else {
    const Tensor* parts[5] = {};
    for (size_t i = 1; i < 5; ++i) {
      if (i >= n.inputs.size() || n.inputs[i] == kNoValue) continue;
      parts[i] = graph.value(n.inputs[i]).constant.get();
      if (!parts[i]) return unsupported("Slice's starts, ends, axes and steps must be constants");
    }
    if (!parts[1] || !parts[2]) return invalid_argument("Slice needs starts and ends inputs from opset 10 on");
    starts = parts[1]->to_int64_vector();
    ends = parts[2]->to_int64_vector();
    if ((has_axes = parts[3] != nullptr)) axes = parts[3]->to_int64_vector();
    if ((has_steps = parts[4] != nullptr)) steps = parts[4]->to_int64_vector();
  }
  if (!has_axes) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (!has_steps) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return invalid_argument("Slice's starts, ends, axes and steps differ in length");
  SliceWindow w;
  w.start.assign(rank, 0);
  w.step.assign(rank, 1);
  w.shape = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(axes[i], static_cast<int64_t>(rank)));
    const size_t d = static_cast<size_t>(axis);
    const int64_t dim = in[d];
    const int64_t st = steps[i];
    if (st == 0) return invalid_argument("Slice has a step of 0");
    if (dim == 0) continue;
    const SliceRange r = slice_range(dim, starts[i], ends[i], st);
    w.shape[d] = r.length;
    // A step beyond the dim visits one element; capping it keeps offsets small.
    w.start[d] = std::min(r.start, dim - 1);
    w.step[d] = st > 0 ? std::min(st, dim) : std::max(st, -dim);
  }
  return w;
}

}  // namespace hetsched
