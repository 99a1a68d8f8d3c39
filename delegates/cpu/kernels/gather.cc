// Portable Gather and GatherElements kernels (registered from tensor.cc).
//
// Indices are data: every one is checked before anything is written, and a
// bad one is a Status naming it, never an out-of-bounds read.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

void register_gather_kernels(KernelTable& table);

namespace {

// All indices, with negative ones wrapped into [0, dim); an error names the first out of range.
Result<std::vector<int64_t>> checked_indices(const KernelContext& ctx, const Tensor& indices, int64_t dim,
                                             int64_t axis) {
  if (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32)
    return ctx.error("indices must be i64 or i32, got " + indices.type().to_string());
  std::vector<int64_t> out = indices.to_int64_vector();
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t idx = out[i];
    if (idx < -dim || idx >= dim)
      return ctx.error("index " + std::to_string(idx) + " (element " + std::to_string(i) +
                       " of the indices) is out of range [" + std::to_string(-dim) + ", " + std::to_string(dim - 1) +
                       "] for axis " + std::to_string(axis) + " of size " + std::to_string(dim));
    if (idx < 0) out[i] += dim;
  }
  return out;
}

Result<int64_t> axis_of(const KernelContext& ctx, int64_t rank) {
  Result<int64_t> raw = ctx.attrs().get_int("axis", 0);
  if (!raw.is_ok()) return ctx.error(raw.status().message());
  Result<int64_t> axis = normalize_axis(*raw, rank);
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  return axis;
}

// out[outer, j..., inner] = data[outer, indices[j...], inner]: one memcpy of `inner` elements per index.
Status gather_kernel(const KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  const Tensor& indices = ctx.in(1);
  Tensor& out = ctx.out(0);
  const Shape& shape = data.shape();
  HS_ASSIGN_OR_RETURN(int64_t axis, axis_of(ctx, static_cast<int64_t>(shape.size())));
  const int64_t dim = shape[static_cast<size_t>(axis)];
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> idx, checked_indices(ctx, indices, dim, axis));

  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) < axis) outer *= shape[d];
    if (static_cast<int64_t>(d) > axis) inner *= shape[d];
  }
  const size_t block = static_cast<size_t>(inner) * dtype_size(data.dtype());
  if (out.dtype() != data.dtype() || out.byte_size() != static_cast<size_t>(outer) * idx.size() * block)
    return ctx.error("output " + out.type().to_string() + " does not fit data " + data.type().to_string() +
                     " gathered by indices " + indices.type().to_string());
  if (block == 0) return Status::ok();
  std::byte* dst = out.raw();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      std::memcpy(dst, data.raw() + static_cast<size_t>(o * dim + i) * block, block);
      dst += block;
    }
  return Status::ok();
}

// out[p] = data[p with p[axis] replaced by indices[p]], for every position p of indices.
Status gather_elements_kernel(const KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  const Tensor& indices = ctx.in(1);
  Tensor& out = ctx.out(0);
  const Shape& dshape = data.shape();
  const Shape& ishape = indices.shape();
  const size_t rank = dshape.size();
  HS_ASSIGN_OR_RETURN(int64_t axis, axis_of(ctx, static_cast<int64_t>(rank)));
  if (ishape.size() != rank || out.shape() != ishape || out.dtype() != data.dtype())
    return ctx.error("data " + data.type().to_string() + ", indices " + indices.type().to_string() + " and output " +
                     out.type().to_string() + " do not fit together");
  for (size_t d = 0; d < rank; ++d)
    if (static_cast<int64_t>(d) != axis && ishape[d] > dshape[d])
      return ctx.error("indices " + indices.type().to_string() + " are larger than data " + data.type().to_string() +
                       " in dim " + std::to_string(d));
  const int64_t dim = dshape[static_cast<size_t>(axis)];
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> idx, checked_indices(ctx, indices, dim, axis));
  if (idx.empty()) return Status::ok();

  std::vector<int64_t> dstrides(rank, 1);
  for (size_t d = rank; d-- > 1;) dstrides[d - 1] = dstrides[d] * dshape[d];
  const size_t elem = dtype_size(data.dtype());
  const size_t uaxis = static_cast<size_t>(axis);
  std::vector<int64_t> pos(rank, 0);
  // Offset into data of `pos` with its axis coordinate left out.
  int64_t base = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t src = base + idx[i] * dstrides[uaxis];
    std::memcpy(out.raw() + i * elem, data.raw() + static_cast<size_t>(src) * elem, elem);
    for (size_t d = rank; d-- > 0;) {
      if (d != uaxis) base += dstrides[d];
      if (++pos[d] < ishape[d]) break;
      if (d != uaxis) base -= dstrides[d] * ishape[d];
      pos[d] = 0;
    }
  }
  return Status::ok();
}

}  // namespace

void register_gather_kernels(KernelTable& table) {
  table.emplace("Gather", gather_kernel);
  table.emplace("GatherElements", gather_elements_kernel);
}

}  // namespace hetsched::cpu
