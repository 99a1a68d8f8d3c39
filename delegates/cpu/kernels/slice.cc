// Portable Slice kernel (ONNX Slice, opsets 1-17; registered from tensor.cc).
//
// The clamping rules are re-derived here from the node rather than taken
// from shape inference so that this kernel stays an independent oracle; the
// output shape the caller allocated must agree with them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

void register_slice_kernels(KernelTable& table);

namespace {

struct SliceParams {
  std::vector<int64_t> starts, ends, axes, steps;
};

// Opset < 10 carries starts/ends/axes as attributes; from 10 on they and steps are inputs 1-4.
Result<SliceParams> read_params(const KernelContext& ctx, size_t rank) {
  SliceParams p;
  if (ctx.opset < 10) {
    HS_ASSIGN_OR_RETURN(p.starts, ctx.attrs().require_ints("starts"));
    HS_ASSIGN_OR_RETURN(p.ends, ctx.attrs().require_ints("ends"));
    HS_ASSIGN_OR_RETURN(p.axes, ctx.attrs().get_ints("axes", {}));
  } else {
    if (!ctx.has_input(1) || !ctx.has_input(2)) return invalid_argument("starts and ends inputs are missing");
    p.starts = ctx.in(1).to_int64_vector();
    p.ends = ctx.in(2).to_int64_vector();
    if (ctx.has_input(3)) p.axes = ctx.in(3).to_int64_vector();
    if (ctx.has_input(4)) p.steps = ctx.in(4).to_int64_vector();
  }
  const bool has_axes = ctx.opset < 10 ? ctx.attrs().has("axes") : ctx.has_input(3);
  if (!has_axes) {
    p.axes.resize(p.starts.size());
    std::iota(p.axes.begin(), p.axes.end(), 0);
  }
  if (!(ctx.opset >= 10 && ctx.has_input(4))) p.steps.assign(p.starts.size(), 1);
  if (p.ends.size() != p.starts.size() || p.axes.size() != p.starts.size() || p.steps.size() != p.starts.size())
    return invalid_argument("starts, ends, axes and steps differ in length");
  for (int64_t& a : p.axes) {
    HS_ASSIGN_OR_RETURN(a, normalize_axis(a, static_cast<int64_t>(rank)));
  }
  return p;
}

// Copies out[i] = in[start + i * step] along every dim, a contiguous run at a time where the last step is 1.
Status slice_kernel(const KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  Tensor& out = ctx.out(0);
  const Shape& in_shape = in.shape();
  const size_t rank = in_shape.size();
  Result<SliceParams> params = read_params(ctx, rank);
  if (!params.is_ok()) return ctx.error(params.status().message());

  std::vector<int64_t> start(rank, 0), step(rank, 1);
  Shape out_shape = in_shape;
  for (size_t i = 0; i < params->axes.size(); ++i) {
    const size_t d = static_cast<size_t>(params->axes[i]);
    const int64_t dim = in_shape[d];
    const int64_t st = params->steps[i];
    if (st == 0) return ctx.error("a step is 0");
    if (dim == 0) continue;
    const SliceRange r = slice_range(dim, params->starts[i], params->ends[i], st);
    out_shape[d] = r.length;
    start[d] = r.start;
    // A step larger than the dim visits one element; cap it so offsets cannot overflow.
    step[d] = st > 0 ? std::min(st, dim) : std::max(st, -dim);
  }
  if (out_shape != out.shape() || out.dtype() != in.dtype())
    return ctx.error("output " + out.type().to_string() + " does not match the slice " +
                     TensorType{in.dtype(), out_shape}.to_string());
  const int64_t total = shape_elements(out_shape);
  if (total == 0) return Status::ok();
  if (rank == 0) {
    std::memcpy(out.raw(), in.raw(), in.byte_size());
    return Status::ok();
  }

  const size_t elem = dtype_size(in.dtype());
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in_shape[d];
  const int64_t inner = out_shape[rank - 1];
  const int64_t inner_step = step[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d) offset += start[d] * in_strides[d];
  const std::byte* src = in.raw();
  std::byte* dst = out.raw();
  for (int64_t row = 0, rows = total / inner; row < rows; ++row) {
    const std::byte* s = src + static_cast<size_t>(offset) * elem;
    if (inner_step == 1) {
      std::memcpy(dst, s, static_cast<size_t>(inner) * elem);
      dst += static_cast<size_t>(inner) * elem;
    } else {
      for (int64_t i = 0; i < inner; ++i, dst += elem)
        std::memcpy(dst, s + i * inner_step * static_cast<int64_t>(elem), elem);
    }
    for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      offset += step[u] * in_strides[u];
      if (++idx[u] < out_shape[u]) break;
      offset -= step[u] * in_strides[u] * out_shape[u];
      idx[u] = 0;
    }
  }
  return Status::ok();
}

}  // namespace

void register_slice_kernels(KernelTable& table) { table.emplace("Slice", slice_kernel); }

}  // namespace hetsched::cpu
