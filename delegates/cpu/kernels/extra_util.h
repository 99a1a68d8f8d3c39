// Helpers shared by the kernels of the extra ops (extra*.cc): n-ary
// broadcasting, dtype dispatch and element-size copies.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"

namespace hetsched::cpu {

// Walks the output of an n-ary broadcast one innermost row at a time and
// calls row(out_offset, offsets, steps, length), where element j of the row
// reads input k at offsets[k] + j * steps[k] (a step is 0 where input k is
// broadcast along the row). Rows run in parallel when the output is large;
// `row` must be safe to call concurrently.
template <typename RowFn>
void for_each_broadcast_row_n(const std::vector<Shape>& inputs, const Shape& out, RowFn&& row) {
  const int64_t total = shape_elements(out);
  if (total == 0) return;
  const size_t n = inputs.size();
  const size_t rank = out.size();
  std::vector<std::vector<int64_t>> strides(n);
  std::vector<int64_t> steps(n, 0);
  for (size_t k = 0; k < n; ++k) {
    strides[k] = broadcast_strides(inputs[k], out);
    if (rank > 0) steps[k] = strides[k].back();
  }
  const int64_t length = rank == 0 ? 1 : out.back();
  const int64_t rows = total / length;
  parallel_chunks(rows, std::max<int64_t>(1, kParallelGrain / length), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> offsets(n);
    for (int64_t r = begin; r < end; ++r) {
      std::fill(offsets.begin(), offsets.end(), 0);
      int64_t rest = r;
      // Every dim but the innermost; none for a scalar (rank 0).
      for (size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
        const int64_t idx = rest % out[d];
        rest /= out[d];
        for (size_t k = 0; k < n; ++k) offsets[k] += idx * strides[k][d];
      }
      row(r * length, offsets.data(), steps.data(), length);
    }
  });
}

// Calls f(T{}) with the C++ type of the numeric dtypes the extra ops compute
// in (f32, i64, i32); returns false for any other dtype.
template <typename F>
bool visit_numeric(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32:
      f(float{});
      return true;
    case DType::kInt64:
      f(int64_t{});
      return true;
    case DType::kInt32:
      f(int32_t{});
      return true;
    default:
      return false;
  }
}

// Calls f(T{}) with an unsigned integer type of `bytes` bytes, so a copy
// loop moves whole elements whatever their dtype.
template <typename F>
void visit_element_bits(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(uint8_t{});
      break;
    case 2:
      f(uint16_t{});
      break;
    case 4:
      f(uint32_t{});
      break;
    default:
      f(uint64_t{});
      break;
  }
}

// Checks output 0 is allocated as `expected` and the node has one output.
inline Status check_single_output(const KernelContext& ctx, const TensorType& expected) {
  if (ctx.outputs.size() != 1) return invalid_argument("expects 1 output, got " + std::to_string(ctx.outputs.size()));
  return check_output(ctx, 0, expected);
}

// Registration of the files the extra kernels are split into.
void register_extra_tensor_kernels(KernelTable& table);          // extra_tensor.cc
void register_extra_reduce_kernels(KernelTable& table);          // extra_reduce.cc
void register_extra_conv_transpose_kernels(KernelTable& table);  // extra_conv_transpose.cc

}  // namespace hetsched::cpu
