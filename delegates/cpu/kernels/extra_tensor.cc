// Kernels of the extra data-movement ops: Shape, ConstantOfShape, Range,
// Expand, Tile, Split, Pad and Where. Except for Range and Pad's fill, they
// move elements by their byte size, so one kernel serves every dtype.
#include <cstring>
#include <vector>

#include "delegates/cpu/kernels/extra_util.h"
#include "graph/op_schema.h"
#include "graph/ops_extra.h"

namespace hetsched::cpu {

namespace {

Status shape_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> dims, shape_op_dims(ctx.attrs(), ctx.in(0).shape()));
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{DType::kInt64, {static_cast<int64_t>(dims.size())}}));
  std::copy(dims.begin(), dims.end(), ctx.out(0).data<int64_t>());
  return Status::ok();
}

Status constant_of_shape_kernel(const KernelContext& ctx) {
  const std::vector<int64_t> shape = ctx.in(0).to_int64_vector();
  Tensor fill = Tensor::from_vector<float>(DType::kFloat32, {1}, {0.f});
  if (const Attribute* a = ctx.attrs().find("value")) {
    const Tensor* value = std::get_if<Tensor>(a);
    if (!value || value->num_elements() != 1) return invalid_argument("attribute 'value' must be a one-element tensor");
    fill = *value;
  }
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{fill.dtype(), shape}));
  const size_t elem = dtype_size(fill.dtype());
  std::byte* dst = ctx.out(0).raw();
  for (int64_t i = 0; i < ctx.out(0).num_elements(); ++i) std::memcpy(dst + i * elem, fill.raw(), elem);
  return Status::ok();
}

// Element i is start + i * delta, computed in the tensor's type as numpy.arange does.
Status range_kernel(const KernelContext& ctx) {
  const DType dtype = ctx.in(0).dtype();
  for (size_t i = 1; i < 3; ++i)
    if (ctx.in(i).dtype() != dtype) return invalid_argument("start, limit and delta must share one dtype");
  if (ctx.outputs.size() != 1 || ctx.out(0).dtype() != dtype || ctx.out(0).shape().size() != 1)
    return invalid_argument("output must be a 1-D " + std::string(dtype_name(dtype)) + " tensor");
  bool ok = visit_numeric(dtype, [&](auto t) {
    using T = decltype(t);
    const T start = ctx.in(0).data<T>()[0];
    const T delta = ctx.in(2).data<T>()[0];
    T* py = ctx.out(0).data<T>();
    for (int64_t i = 0; i < ctx.out(0).num_elements(); ++i) py[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  });
  if (!ok) return invalid_argument("expects f32, i64 or i32 inputs, got " + ctx.in(0).type().to_string());
  return Status::ok();
}

Status expand_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(x.shape(), ctx.in(1).to_int64_vector()));
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{x.dtype(), std::move(shape)}));
  visit_element_bits(dtype_size(x.dtype()), [&](auto t) {
    using T = decltype(t);
    const T* px = x.data<T>();
    T* py = ctx.out(0).data<T>();
    for_each_broadcast_row_n({x.shape()}, ctx.out(0).shape(),
                             [&](int64_t out, const int64_t* offs, const int64_t* steps, int64_t n) {
                               for (int64_t j = 0; j < n; ++j) py[out + j] = px[offs[0] + j * steps[0]];
                             });
  });
  return Status::ok();
}

// Output element (i0, .., ik) reads input element (i0 % d0, .., ik % dk).
Status tile_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const std::vector<int64_t> repeats = ctx.in(1).to_int64_vector();
  const Shape& in = x.shape();
  if (repeats.size() != in.size()) return invalid_argument("repeats must have one value per dim of the input");
  Shape out_shape = in;
  for (size_t d = 0; d < in.size(); ++d) out_shape[d] *= repeats[d];
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{x.dtype(), out_shape}));
  const int64_t total = shape_elements(out_shape);
  if (total == 0) return Status::ok();
  const size_t rank = in.size();
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * in[d];
  visit_element_bits(dtype_size(x.dtype()), [&](auto t) {
    using T = decltype(t);
    const T* px = x.data<T>();
    T* py = ctx.out(0).data<T>();
    std::vector<int64_t> idx(rank, 0);
    for (int64_t o = 0; o < total; ++o) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += idx[d] % in[d] * in_strides[d];
      py[o] = px[src];
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < out_shape[d]) break;
        idx[d] = 0;
      }
    }
  });
  return Status::ok();
}

Status split_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const int64_t raw_axis, ctx.attrs().get_int("axis", 0));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(raw_axis, static_cast<int64_t>(x.shape().size())));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> sizes,
                      split_sizes(ctx.attrs(), ctx.opset, ctx.has_input(1) ? &ctx.in(1) : nullptr, x.shape(), axis,
                                  ctx.outputs.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape().size(); ++d) inner *= x.shape()[d];
  const size_t elem = dtype_size(x.dtype());
  const int64_t dim = x.shape()[static_cast<size_t>(axis)];
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape shape = x.shape();
    shape[static_cast<size_t>(axis)] = sizes[k];
    HS_RETURN_IF_ERROR(check_output(ctx, k, TensorType{x.dtype(), std::move(shape)}));
    const size_t bytes = static_cast<size_t>(sizes[k] * inner) * elem;
    for (int64_t o = 0; o < outer && bytes != 0; ++o)
      std::memcpy(ctx.out(k).raw() + static_cast<size_t>(o) * bytes,
                  x.raw() + static_cast<size_t>((o * dim + offset) * inner) * elem, bytes);
    offset += sizes[k];
  }
  return Status::ok();
}

// Source index along one dim for each output index, or -1 where constant
// mode fills (graph/ops_extra.h's rule, which the GPU delegates share).
std::vector<int64_t> pad_map(int64_t in, int64_t out, int64_t begin, const std::string& mode) {
  std::vector<int64_t> map(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) map[static_cast<size_t>(o)] = pad_source_index(o - begin, in, mode);
  return map;
}

template <typename T>
void pad_typed(const Tensor& x, Tensor& y, const std::vector<std::vector<int64_t>>& maps, T fill) {
  const Shape& out = y.shape();
  const size_t rank = out.size();
  const int64_t total = shape_elements(out);
  if (total == 0) return;
  const T* px = x.data<T>();
  T* py = y.data<T>();
  if (rank == 0) {
    py[0] = px[0];
    return;
  }
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * x.shape()[d];
  const int64_t length = out.back();
  const std::vector<int64_t>& inner = maps.back();
  parallel_chunks(total / length, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(length, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r) {
                      T* row = py + r * length;
                      int64_t base = 0, rest = r;
                      bool filled = false;
                      for (size_t d = rank - 1; d-- > 0;) {
                        const int64_t src = maps[d][static_cast<size_t>(rest % out[d])];
                        rest /= out[d];
                        if (src < 0) filled = true;
                        base += src * in_strides[d];
                      }
                      if (filled) {
                        std::fill(row, row + length, fill);
                        continue;
                      }
                      for (int64_t j = 0; j < length; ++j) {
                        const int64_t src = inner[static_cast<size_t>(j)];
                        row[j] = src < 0 ? fill : px[base + src];
                      }
                    }
                  });
}

Status pad_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const PadParams p,
                      pad_params(ctx.attrs(), ctx.opset, x.shape(), ctx.has_input(1) ? &ctx.in(1) : nullptr,
                                 ctx.has_input(2) ? &ctx.in(2) : nullptr, ctx.has_input(3) ? &ctx.in(3) : nullptr));
  const size_t rank = x.shape().size();
  Shape out_shape = x.shape();
  std::vector<std::vector<int64_t>> maps(rank);
  for (size_t d = 0; d < rank; ++d) {
    out_shape[d] += p.pads[d] + p.pads[rank + d];
    if (out_shape[d] < 0) return invalid_argument("pads crop dim " + std::to_string(d) + " below 0");
    if (p.mode == "reflect" && (p.pads[d] >= x.shape()[d] || p.pads[rank + d] >= x.shape()[d]))
      return invalid_argument("reflect pads must be smaller than dim " + std::to_string(d));
    maps[d] = pad_map(x.shape()[d], out_shape[d], p.pads[d], p.mode);
  }
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{x.dtype(), out_shape}));
  switch (x.dtype()) {
    case DType::kFloat32:
      pad_typed<float>(x, ctx.out(0), maps, static_cast<float>(p.value));
      break;
    case DType::kInt64:
      pad_typed<int64_t>(x, ctx.out(0), maps, static_cast<int64_t>(p.value));
      break;
    case DType::kInt32:
      pad_typed<int32_t>(x, ctx.out(0), maps, static_cast<int32_t>(p.value));
      break;
    case DType::kBool:
    case DType::kUInt8:
      pad_typed<uint8_t>(x, ctx.out(0), maps, static_cast<uint8_t>(p.value));
      break;
    case DType::kInt8:
      pad_typed<int8_t>(x, ctx.out(0), maps, static_cast<int8_t>(p.value));
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      return unsupported(std::string(dtype_name(x.dtype())) + " data is not supported");
  }
  return Status::ok();
}

Status where_kernel(const KernelContext& ctx) {
  const Tensor& cond = ctx.in(0);
  const Tensor& x = ctx.in(1);
  const Tensor& y = ctx.in(2);
  if (cond.dtype() != DType::kBool || x.dtype() != y.dtype())
    return invalid_argument("expects a bool condition and X, Y of one dtype, got " + cond.type().to_string() + ", " +
                            x.type().to_string() + ", " + y.type().to_string());
  HS_ASSIGN_OR_RETURN(Shape xy, broadcast_shapes(x.shape(), y.shape()));
  HS_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(cond.shape(), xy));
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{x.dtype(), shape}));
  visit_element_bits(dtype_size(x.dtype()), [&](auto t) {
    using T = decltype(t);
    const uint8_t* pc = cond.data<uint8_t>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = ctx.out(0).data<T>();
    for_each_broadcast_row_n({cond.shape(), x.shape(), y.shape()}, shape,
                             [&](int64_t out, const int64_t* offs, const int64_t* steps, int64_t n) {
                               for (int64_t j = 0; j < n; ++j)
                                 po[out + j] = pc[offs[0] + j * steps[0]] ? px[offs[1] + j * steps[1]]
                                                                          : py[offs[2] + j * steps[2]];
                             });
  });
  return Status::ok();
}

}  // namespace

// Keeps element (i, j) of each matrix of the last two dims where j - i >= k
// (upper) or j - i <= k (lower), zeroes the rest; any element type.
Status trilu_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t k = ctx.has_input(1) ? ctx.in(1).int_at(0) : 0;
  HS_ASSIGN_OR_RETURN(const int64_t upper, ctx.attrs().get_int("upper", 1));
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const Shape& s = x.shape();
  const int64_t rows = s[s.size() - 2], cols = s.back(), matrices = x.num_elements() / std::max<int64_t>(rows * cols, 1);
  const size_t elem = dtype_size(x.dtype());
  const std::byte* src = x.raw();
  std::byte* dst = ctx.out(0).raw();
  for (int64_t m = 0; m < matrices; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const size_t at = static_cast<size_t>((m * rows + i) * cols + j) * elem;
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (keep)
          std::memcpy(dst + at, src + at, elem);
        else
          std::memset(dst + at, 0, elem);
      }
  return Status::ok();
}

void register_extra_tensor_kernels(KernelTable& table) {
  table["Trilu"] = with_node_context(trilu_kernel);
  table["Shape"] = with_node_context(shape_kernel);
  table["ConstantOfShape"] = with_node_context(constant_of_shape_kernel);
  table["Range"] = with_node_context(range_kernel);
  table["Expand"] = with_node_context(expand_kernel);
  table["Tile"] = with_node_context(tile_kernel);
  table["Split"] = with_node_context(split_kernel);
  table["Pad"] = with_node_context(pad_kernel);
  table["Where"] = with_node_context(where_kernel);
}

}  // namespace hetsched::cpu
