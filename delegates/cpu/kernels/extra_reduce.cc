// Kernels of the extra reductions: ReduceSum, ReduceMax, ReduceMin,
// ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum,
// ReduceLogSumExp, ArgMax and ArgMin.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "delegates/cpu/kernels/extra_util.h"
#include "graph/op_schema.h"
#include "graph/ops_extra.h"

namespace hetsched::cpu {

namespace {

enum class ReduceKind { kSum, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// Each output element folds the sub-block its reduced dims span. Float sums
// and products accumulate in double so that the reference loses no
// precision on long reductions; integers accumulate in int64.
template <typename T>
void reduce_typed(const Tensor& x, Tensor& y, const std::vector<bool>& reduced, ReduceKind kind) {
  const Shape& shape = x.shape();
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  Shape kept_dims, kept_strides, red_dims, red_strides;
  for (size_t d = 0; d < rank; ++d) {
    (reduced[d] ? red_dims : kept_dims).push_back(shape[d]);
    (reduced[d] ? red_strides : kept_strides).push_back(strides[d]);
  }
  const int64_t outputs = shape_elements(kept_dims);
  const int64_t count = shape_elements(red_dims);
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  const T* px = x.data<T>();
  T* py = y.data<T>();
  parallel_chunks(outputs, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
                  [&](int64_t begin, int64_t end) {
                    std::vector<int64_t> idx(red_dims.size());
                    for (int64_t o = begin; o < end; ++o) {
                      int64_t offset = 0, rest = o;
                      for (size_t d = kept_dims.size(); d-- > 0;) {
                        offset += rest % kept_dims[d] * kept_strides[d];
                        rest /= kept_dims[d];
                      }
                      std::fill(idx.begin(), idx.end(), 0);
                      Acc acc = kind == ReduceKind::kProd ? Acc{1} : Acc{0};
                      for (int64_t i = 0; i < count; ++i) {
                        const Acc v = static_cast<Acc>(px[offset]);
                        if (i == 0 && (kind == ReduceKind::kMax || kind == ReduceKind::kMin)) {
                          acc = v;
                        } else {
                          switch (kind) {
                            case ReduceKind::kSum:
                            case ReduceKind::kLogSum:
                              acc += v;
                              break;
                            case ReduceKind::kL1:
                              acc += v < 0 ? -v : v;
                              break;
                            case ReduceKind::kL2:
                            case ReduceKind::kSumSquare:
                              acc += v * v;
                              break;
                            case ReduceKind::kLogSumExp:
                              // No max shift: the reference accumulates in
                              // double, whose exp overflows only past 709.
                              acc += static_cast<Acc>(std::exp(static_cast<double>(v)));
                              break;
                            case ReduceKind::kProd:
                              acc *= v;
                              break;
                            case ReduceKind::kMax:
                              acc = std::max(acc, v);
                              break;
                            case ReduceKind::kMin:
                              acc = std::min(acc, v);
                              break;
                          }
                        }
                        // Odometer over the reduced dims.
                        for (size_t d = red_dims.size(); d-- > 0;) {
                          offset += red_strides[d];
                          if (++idx[d] < red_dims[d]) break;
                          offset -= idx[d] * red_strides[d];
                          idx[d] = 0;
                        }
                      }
                      if (kind == ReduceKind::kL2)
                        py[o] = static_cast<T>(std::sqrt(static_cast<double>(acc)));
                      else if (kind == ReduceKind::kLogSum || kind == ReduceKind::kLogSumExp)
                        py[o] = static_cast<T>(std::log(static_cast<double>(acc)));
                      else
                        py[o] = static_cast<T>(acc);
                    }
                  });
}

KernelFn reduce_kernel(ReduceKind kind) {
  return [kind](const KernelContext& ctx) -> Status {
    const Tensor& x = ctx.in(0);
    HS_ASSIGN_OR_RETURN(const ReduceParams p, reduce_params(ctx.node.op, ctx.attrs(), ctx.opset, x.shape(),
                                                            ctx.has_input(1), ctx.has_input(1) ? &ctx.in(1) : nullptr));
    HS_RETURN_IF_ERROR(
        check_single_output(ctx, TensorType{x.dtype(), p.noop ? x.shape() : reduced_shape(x.shape(), p)}));
    if (p.noop) {
      if (x.byte_size() != 0) std::memcpy(ctx.out(0).raw(), x.raw(), x.byte_size());
      return Status::ok();
    }
    if ((kind == ReduceKind::kMax || kind == ReduceKind::kMin) && x.num_elements() == 0 &&
        ctx.out(0).num_elements() != 0)
      return invalid_argument("cannot take the max or min of an empty set");
    const bool ok =
        visit_numeric(x.dtype(), [&](auto t) { reduce_typed<decltype(t)>(x, ctx.out(0), p.reduced, kind); });
    if (!ok) return invalid_argument("expects f32, i64 or i32 input, got " + x.type().to_string());
    return Status::ok();
  };
}

// The index of the first (or, with select_last_index, the last) extreme
// element along the axis.
template <typename T>
void arg_typed(const Tensor& x, Tensor& y, int64_t axis, bool is_max, bool last) {
  const auto [outer, dim, inner] = split_at_axis(x.shape(), axis);
  const T* px = x.data<T>();
  int64_t* py = y.data<int64_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T* base = px + o * dim * inner + i;
      int64_t best = 0;
      for (int64_t k = 1; k < dim; ++k) {
        const T v = base[k * inner], b = base[best * inner];
        const bool better = is_max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
        if (better) best = k;
      }
      py[o * inner + i] = best;
    }
}

KernelFn arg_kernel(bool is_max) {
  return [is_max](const KernelContext& ctx) -> Status {
    const Tensor& x = ctx.in(0);
    HS_ASSIGN_OR_RETURN(const int64_t raw_axis, ctx.attrs().get_int("axis", 0));
    HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(raw_axis, static_cast<int64_t>(x.shape().size())));
    HS_ASSIGN_OR_RETURN(const int64_t keepdims, ctx.attrs().get_int("keepdims", 1));
    HS_ASSIGN_OR_RETURN(const int64_t last, ctx.attrs().get_int("select_last_index", 0));
    Shape out = x.shape();
    if (keepdims)
      out[static_cast<size_t>(axis)] = 1;
    else
      out.erase(out.begin() + axis);
    HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{DType::kInt64, out}));
    if (x.shape()[static_cast<size_t>(axis)] == 0) return invalid_argument("cannot take the arg of an empty axis");
    const bool ok =
        visit_numeric(x.dtype(), [&](auto t) { arg_typed<decltype(t)>(x, ctx.out(0), axis, is_max, last != 0); });
    if (!ok) return invalid_argument("expects f32, i64 or i32 input, got " + x.type().to_string());
    return Status::ok();
  };
}

}  // namespace

void register_extra_reduce_kernels(KernelTable& table) {
  table["ReduceSum"] = with_node_context(reduce_kernel(ReduceKind::kSum));
  table["ReduceMax"] = with_node_context(reduce_kernel(ReduceKind::kMax));
  table["ReduceMin"] = with_node_context(reduce_kernel(ReduceKind::kMin));
  table["ReduceProd"] = with_node_context(reduce_kernel(ReduceKind::kProd));
  table["ReduceL1"] = with_node_context(reduce_kernel(ReduceKind::kL1));
  table["ReduceL2"] = with_node_context(reduce_kernel(ReduceKind::kL2));
  table["ReduceSumSquare"] = with_node_context(reduce_kernel(ReduceKind::kSumSquare));
  table["ReduceLogSum"] = with_node_context(reduce_kernel(ReduceKind::kLogSum));
  table["ReduceLogSumExp"] = with_node_context(reduce_kernel(ReduceKind::kLogSumExp));
  table["ArgMax"] = with_node_context(arg_kernel(true));
  table["ArgMin"] = with_node_context(arg_kernel(false));
}

}  // namespace hetsched::cpu
