// Portable kernels for the data-movement ops. This file holds the ops that
// copy or permute whole tensors (Transpose, Concat and the re-labelling ops);
// Slice, Gather/GatherElements and Resize live in slice.cc, gather.cc and
// resize.cc and are registered from here.
//
// Every kernel here moves elements by their byte size, so one kernel serves
// every dtype.
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "delegates/cpu/kernels/extra_util.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

// Defined in slice.cc, gather.cc and resize.cc.
void register_slice_kernels(KernelTable& table);
void register_gather_kernels(KernelTable& table);
void register_resize_kernels(KernelTable& table);
void register_channel_shuffle_kernel(KernelTable& table);  // channel_shuffle.cc

namespace {

// The ops that leave the bytes in place and only change the shape.
Status copy_kernel(const KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  Tensor& out = ctx.out(0);
  if (in.byte_size() != out.byte_size() || in.dtype() != out.dtype())
    return ctx.error("input " + in.type().to_string() + " and output " + out.type().to_string() +
                     " differ in size or dtype");
  if (in.byte_size() != 0) std::memcpy(out.raw(), in.raw(), in.byte_size());
  return Status::ok();
}

// out[i0, .., in] = src[sum_k i_k * src_strides[k]], walking the output in order.
template <typename T>
void transpose_typed(const T* src, T* dst, const Shape& out_shape, const std::vector<int64_t>& src_strides) {
  const size_t rank = out_shape.size();
  const int64_t total = shape_elements(out_shape);
  if (total == 0) return;
  if (rank == 0) {
    *dst = *src;
    return;
  }
  const int64_t inner = out_shape[rank - 1];
  const int64_t inner_stride = src_strides[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t row = 0, rows = total / inner; row < rows; ++row) {
    const T* s = src + offset;
    for (int64_t i = 0; i < inner; ++i) *dst++ = s[i * inner_stride];
    for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      offset += src_strides[u];
      if (++idx[u] < out_shape[u]) break;
      offset -= src_strides[u] * out_shape[u];
      idx[u] = 0;
    }
  }
}

Status transpose_kernel(const KernelContext& ctx) {
  const Tensor& in = ctx.in(0);
  Tensor& out = ctx.out(0);
  const size_t rank = in.shape().size();
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  Result<std::vector<int64_t>> attr = ctx.attrs().get_ints("perm", perm);
  if (!attr.is_ok()) return ctx.error(attr.status().message());
  perm = *attr;
  if (perm.size() != rank || out.shape().size() != rank || out.dtype() != in.dtype())
    return ctx.error("perm, input " + in.type().to_string() + " and output " + out.type().to_string() + " disagree");
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in.shape()[d];
  std::vector<int64_t> src_strides(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || perm[d] >= static_cast<int64_t>(rank) ||
        out.shape()[d] != in.shape()[static_cast<size_t>(perm[d])])
      return ctx.error("perm does not map input " + in.type().to_string() + " to output " + out.type().to_string());
    src_strides[d] = in_strides[static_cast<size_t>(perm[d])];
  }
  visit_element_bits(dtype_size(in.dtype()), [&](auto t) {
    using T = decltype(t);
    transpose_typed(in.data<T>(), out.data<T>(), out.shape(), src_strides);
  });
  return Status::ok();
}

// Each output row (the dims before `axis`) is the inputs' rows laid end to end.
Status concat_kernel(const KernelContext& ctx) {
  Tensor& out = ctx.out(0);
  Result<int64_t> raw_axis = ctx.attrs().require_int("axis");
  if (!raw_axis.is_ok()) return ctx.error(raw_axis.status().message());
  Result<int64_t> axis = normalize_axis(*raw_axis, static_cast<int64_t>(out.shape().size()));
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  const size_t elem = dtype_size(out.dtype());
  int64_t outer = 1;
  for (int64_t d = 0; d < *axis; ++d) outer *= out.shape()[static_cast<size_t>(d)];
  std::vector<size_t> row_bytes(ctx.inputs.size());
  size_t total_row = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
    const Tensor& in = ctx.in(i);
    if (in.dtype() != out.dtype() || in.shape().size() != out.shape().size())
      return ctx.error("input " + std::to_string(i) + " " + in.type().to_string() + " does not fit output " +
                       out.type().to_string());
    int64_t row = 1;
    for (size_t d = static_cast<size_t>(*axis); d < in.shape().size(); ++d) row *= in.shape()[d];
    row_bytes[i] = static_cast<size_t>(row) * elem;
    total_row += row_bytes[i];
  }
  if (total_row * static_cast<size_t>(outer) != out.byte_size())
    return ctx.error("inputs do not add up to output " + out.type().to_string());
  std::byte* dst = out.raw();
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      if (row_bytes[i] == 0) continue;
      std::memcpy(dst, ctx.in(i).raw() + static_cast<size_t>(o) * row_bytes[i], row_bytes[i]);
      dst += row_bytes[i];
    }
  return Status::ok();
}

}  // namespace

void register_tensor_kernels(KernelTable& table) {
  table.emplace("Transpose", transpose_kernel);
  for (const char* op : {"Reshape", "Flatten", "Identity", "Squeeze", "Unsqueeze"}) table.emplace(op, copy_kernel);
  table.emplace("Concat", concat_kernel);
  register_slice_kernels(table);
  register_gather_kernels(table);
  register_resize_kernels(table);
  register_channel_shuffle_kernel(table);
}

}  // namespace hetsched::cpu
