// Portable kernels of graph/ops_misc.cc: Size, IsNaN, IsInf, DepthToSpace,
// SpaceToDepth, CumSum, InstanceNormalization, TopK, GatherND, ScatterND and
// ScatterElements, LRN, Hardmax, CastLike, OneHot, EyeLike and
// ReverseSequence; Einsum's is in einsum.cc, GridSample's in grid_sample.cc,
// RoiAlign's in roi_align.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "delegates/cpu/kernels/extra_util.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

Status einsum_kernel(const KernelContext& ctx);       // einsum.cc
Status grid_sample_kernel(const KernelContext& ctx);  // grid_sample.cc
Status roi_align_kernel(const KernelContext& ctx);    // roi_align.cc

namespace {

Status size_kernel(const KernelContext& ctx) {
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{DType::kInt64, {}}));
  ctx.out(0).data<int64_t>()[0] = ctx.in(0).num_elements();
  return Status::ok();
}

KernelFn is_special(bool nan) {
  return [nan](const KernelContext& ctx) -> Status {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::kFloat32) return invalid_argument("input must be f32, got " + x.type().to_string());
    HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{DType::kBool, x.shape()}));
    HS_ASSIGN_OR_RETURN(const int64_t neg, ctx.attrs().get_int("detect_negative", 1));
    HS_ASSIGN_OR_RETURN(const int64_t pos, ctx.attrs().get_int("detect_positive", 1));
    const float* px = x.data<float>();
    uint8_t* py = ctx.out(0).data<uint8_t>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const float v = px[i];
      py[i] = nan ? std::isnan(v) : (std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)));
    }
    return Status::ok();
  };
}

// y[n, c, h, w] = x[n, c', h', w'] with the index maps of ONNX's definitions
// (DepthToSpace DCR: depth, column, row; CRD: column, row, depth).
Status depth_space_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const int64_t b, ctx.attrs().require_int("blocksize"));
  const bool to_space = ctx.node.op == "DepthToSpace";
  HS_ASSIGN_OR_RETURN(const std::string mode, ctx.attrs().get_string("mode", "DCR"));
  const Shape& s = x.shape();
  const Shape out = to_space ? Shape{s[0], s[1] / (b * b), s[2] * b, s[3] * b}
                             : Shape{s[0], s[1] * b * b, s[2] / b, s[3] / b};
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{x.dtype(), out}));
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  const int64_t C = s[1], H = s[2], W = s[3];
  // Walk the depth-side tensor (x for DepthToSpace, y for SpaceToDepth) and
  // move each element between it and the space side.
  const int64_t Cs = to_space ? C / (b * b) : C;        // channels on the space side
  const int64_t Hd = to_space ? H : H / b, Wd = to_space ? W : W / b;  // depth side's spatial dims
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < Cs; ++c)
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 0; j < b; ++j) {
          const int64_t dc = !to_space || mode == "DCR" ? (i * b + j) * Cs + c : c * b * b + i * b + j;
          for (int64_t h = 0; h < Hd; ++h)
            for (int64_t w = 0; w < Wd; ++w) {
              const int64_t depth = ((n * Cs * b * b + dc) * Hd + h) * Wd + w;
              const int64_t space = ((n * Cs + c) * Hd * b + h * b + i) * Wd * b + w * b + j;
              if (to_space)
                py[space] = px[depth];
              else
                py[depth] = px[space];
            }
        }
  return Status::ok();
}

template <typename T>
void cumsum_typed(const Tensor& x, Tensor& y, int64_t axis, bool exclusive, bool reverse) {
  const auto [outer, len, inner] = split_at_axis(x.shape(), axis);
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      T acc = 0;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t at = (o * len + (reverse ? len - 1 - k : k)) * inner + i;
        if (exclusive) {
          py[at] = acc;
          acc += px[at];
        } else {
          acc += px[at];
          py[at] = acc;
        }
      }
    }
}

Status cumsum_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const int64_t axis,
                      normalize_axis(ctx.in(1).int_at(0), static_cast<int64_t>(x.shape().size())));
  HS_ASSIGN_OR_RETURN(const int64_t exclusive, ctx.attrs().get_int("exclusive", 0));
  HS_ASSIGN_OR_RETURN(const int64_t reverse, ctx.attrs().get_int("reverse", 0));
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const bool ok = visit_numeric(x.dtype(), [&](auto t) {
    cumsum_typed<decltype(t)>(x, ctx.out(0), axis, exclusive != 0, reverse != 0);
  });
  if (!ok) return invalid_argument("expects f32, i64 or i32 input, got " + x.type().to_string());
  return Status::ok();
}

// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c] over each (n, c)'s
// spatial elements; statistics in double.
Status instance_norm_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const float epsilon, ctx.attrs().get_float("epsilon", 1e-5f));
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const int64_t N = x.shape()[0], C = x.shape()[1], inner = x.num_elements() / std::max<int64_t>(N * C, 1);
  const float* px = x.data<float>();
  const float* scale = ctx.in(1).data<float>();
  const float* bias = ctx.in(2).data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_chunks(N * C, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* in = px + r * inner;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < inner; ++i) sum += in[i];
      const double mean = sum / static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) sq += (in[i] - mean) * (in[i] - mean);
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + epsilon);
      const int64_t c = r % C;
      for (int64_t i = 0; i < inner; ++i)
        py[r * inner + i] = static_cast<float>(scale[c] * (in[i] - mean) * inv + bias[c]);
    }
  });
  return Status::ok();
}

// TopK along `axis`: the k largest (or smallest) elements, sorted, ties to
// the lower index, with their indices.
template <typename T>
void topk_typed(const Tensor& x, Tensor& values, Tensor* indices, int64_t axis, int64_t k, bool largest) {
  const auto [outer, len, inner] = split_at_axis(x.shape(), axis);
  const T* px = x.data<T>();
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const auto at = [&](int64_t j) { return px[(o * len + j) * inner + i]; };
      for (int64_t j = 0; j < len; ++j) order[static_cast<size_t>(j)] = j;
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        const T va = at(a), vb = at(b);
        if (va != vb) return largest ? va > vb : va < vb;
        return a < b;
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t out = (o * k + j) * inner + i;
        values.data<T>()[out] = at(order[static_cast<size_t>(j)]);
        if (indices) indices->data<int64_t>()[out] = order[static_cast<size_t>(j)];
      }
    }
}

Status topk_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, ctx.attrs().get_int("axis", -1));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(x.shape().size())));
  int64_t k = 0;
  if (ctx.has_input(1)) {
    k = ctx.in(1).int_at(0);
  } else {
    HS_ASSIGN_OR_RETURN(k, ctx.attrs().require_int("k"));
  }
  HS_ASSIGN_OR_RETURN(const int64_t largest, ctx.attrs().get_int("largest", 1));
  Shape shape = x.shape();
  shape[static_cast<size_t>(axis)] = k;
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{x.dtype(), shape}));
  Tensor* indices = ctx.outputs.size() > 1 && ctx.outputs[1] ? &ctx.out(1) : nullptr;
  const bool ok = visit_numeric(x.dtype(), [&](auto t) {
    topk_typed<decltype(t)>(x, ctx.out(0), indices, axis, k, largest != 0);
  });
  if (!ok) return invalid_argument("expects f32, i64 or i32 input, got " + x.type().to_string());
  return Status::ok();
}

// Row-major offset of each element of `shape`'s leading `dims` dims.
std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
  return st;
}

Result<int64_t> checked_index(int64_t i, int64_t dim) {
  if (i < -dim || i >= dim)
    return invalid_argument("index " + std::to_string(i) + " is out of range for a dim of " + std::to_string(dim));
  return i < 0 ? i + dim : i;
}

Status gather_nd_kernel(const KernelContext& ctx) {
  const Tensor& data = ctx.in(0);
  const Tensor& idx = ctx.in(1);
  HS_ASSIGN_OR_RETURN(const int64_t b, ctx.attrs().get_int("batch_dims", 0));
  const int64_t last = idx.shape().back();
  const Shape& ds = data.shape();
  const std::vector<int64_t> st = strides_of(ds);
  int64_t batches = 1;
  for (int64_t d = 0; d < b; ++d) batches *= ds[static_cast<size_t>(d)];
  const int64_t slice = b + last < static_cast<int64_t>(ds.size()) ? st[static_cast<size_t>(b + last - 1)] : 1;
  const int64_t per_batch = idx.num_elements() / std::max<int64_t>(last, 1) / std::max<int64_t>(batches, 1);
  const size_t elem = dtype_size(data.dtype());
  const int64_t batch_stride = b > 0 ? st[static_cast<size_t>(b - 1)] : 0;
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t q = 0; q < per_batch; ++q) {
      int64_t offset = bi * batch_stride;
      for (int64_t j = 0; j < last; ++j) {
        HS_ASSIGN_OR_RETURN(const int64_t i, checked_index(idx.int_at((bi * per_batch + q) * last + j),
                                                           ds[static_cast<size_t>(b + j)]));
        offset += i * st[static_cast<size_t>(b + j)];
      }
      std::memcpy(ctx.out(0).raw() + static_cast<size_t>((bi * per_batch + q) * slice) * elem,
                  data.raw() + static_cast<size_t>(offset) * elem, static_cast<size_t>(slice) * elem);
    }
  return Status::ok();
}

template <typename T>
T reduce_one(const std::string& reduction, T old, T update) {
  if (reduction == "add") return old + update;
  if (reduction == "mul") return old * update;
  if (reduction == "max") return std::max(old, update);
  if (reduction == "min") return std::min(old, update);
  return update;
}

// Both scatters: copy data, then write (or reduce) each update at the
// offset `offset_of(u)` gives for update element u.
template <typename OffsetOf>
Status scatter(const KernelContext& ctx, int64_t updates, int64_t run, OffsetOf offset_of) {
  const Tensor& data = ctx.in(0);
  const Tensor& upd = ctx.in(2);
  HS_ASSIGN_OR_RETURN(const std::string reduction, ctx.attrs().get_string("reduction", "none"));
  HS_RETURN_IF_ERROR(check_single_output(ctx, data.type()));
  std::memcpy(ctx.out(0).raw(), data.raw(), data.byte_size());
  Status status;
  const bool ok = visit_numeric(data.dtype(), [&](auto t) {
    using T = decltype(t);
    T* py = ctx.out(0).data<T>();
    const T* pu = upd.data<T>();
    for (int64_t u = 0; u < updates && status.is_ok(); ++u) {
      Result<int64_t> at = offset_of(u);
      if (!at.is_ok()) {
        status = at.status();
        break;
      }
      for (int64_t r = 0; r < run; ++r) py[*at + r] = reduce_one<T>(reduction, py[*at + r], pu[u * run + r]);
    }
  });
  if (!ok) return invalid_argument("expects f32, i64 or i32 data, got " + data.type().to_string());
  return status;
}

Status scatter_nd_kernel(const KernelContext& ctx) {
  const Tensor& idx = ctx.in(1);
  const Shape& ds = ctx.in(0).shape();
  const std::vector<int64_t> st = strides_of(ds);
  const int64_t last = idx.shape().back();
  const int64_t run = last < static_cast<int64_t>(ds.size()) ? st[static_cast<size_t>(last - 1)] : 1;
  return scatter(ctx, idx.num_elements() / std::max<int64_t>(last, 1), run, [&](int64_t u) -> Result<int64_t> {
    int64_t offset = 0;
    for (int64_t j = 0; j < last; ++j) {
      HS_ASSIGN_OR_RETURN(const int64_t i, checked_index(idx.int_at(u * last + j), ds[static_cast<size_t>(j)]));
      offset += i * st[static_cast<size_t>(j)];
    }
    return offset;
  });
}

Status scatter_elements_kernel(const KernelContext& ctx) {
  const Tensor& idx = ctx.in(1);
  const Shape& ds = ctx.in(0).shape();
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, ctx.attrs().get_int("axis", 0));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(ds.size())));
  const std::vector<int64_t> st = strides_of(ds), ist = strides_of(idx.shape());
  return scatter(ctx, idx.num_elements(), 1, [&](int64_t u) -> Result<int64_t> {
    int64_t offset = 0, rest = u;
    for (size_t d = 0; d < ds.size(); ++d) {
      int64_t coord = rest / ist[d];
      rest %= ist[d];
      if (static_cast<int64_t>(d) == axis) {
        HS_ASSIGN_OR_RETURN(coord, checked_index(idx.int_at(u), ds[d]));
      }
      offset += coord * st[d];
    }
    return offset;
  });
}

// y = x / (bias + alpha / size * sum of x² over the `size` channels around c)^beta.
Status lrn_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const int64_t size, ctx.attrs().require_int("size"));
  HS_ASSIGN_OR_RETURN(const float alpha, ctx.attrs().get_float("alpha", 1e-4f));
  HS_ASSIGN_OR_RETURN(const float beta, ctx.attrs().get_float("beta", 0.75f));
  HS_ASSIGN_OR_RETURN(const float bias, ctx.attrs().get_float("bias", 1.f));
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const int64_t N = x.shape()[0], C = x.shape()[1], inner = x.num_elements() / std::max<int64_t>(N * C, 1);
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // ONNX: floor((size-1)/2) before, ceil after
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, c - lo); k <= std::min(C - 1, c + hi); ++k) {
          const double v = px[(n * C + k) * inner + i];
          sq += v * v;
        }
        const int64_t at = (n * C + c) * inner + i;
        py[at] = static_cast<float>(px[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
  return Status::ok();
}

Status hardmax_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const bool per_axis = ctx.opset >= 13;
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, ctx.attrs().get_int("axis", per_axis ? -1 : 1));
  const Shape& s = x.shape();
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(s.size())));
  const auto [outer, len, inner] = split_for_softmax(s, axis, ctx.opset);
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t at = (o * len + k) * inner + i;
        py[at] = 0.f;
        if (px[at] > px[(o * len + best) * inner + i]) best = k;
      }
      if (len > 0) py[(o * len + best) * inner + i] = 1.f;
    }
  return Status::ok();
}

Status cast_like_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const DType to = ctx.in(1).dtype();
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{to, x.shape()}));
  Tensor& y = ctx.out(0);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const double v = x.dtype() == DType::kFloat32 ? x.data<float>()[i] : static_cast<double>(x.int_at(i));
    switch (to) {
      case DType::kFloat32: y.data<float>()[i] = static_cast<float>(v); break;
      case DType::kInt64: y.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case DType::kInt32: y.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DType::kBool: y.data<uint8_t>()[i] = v != 0; break;
      default: return unsupported("CastLike to " + std::string(dtype_name(to)) + " is not supported");
    }
  }
  return Status::ok();
}

// out[..., j, ...] = on where j is the index (negative ones count from
// depth), off elsewhere; indices out of [-depth, depth) give an all-off row.
Status one_hot_kernel(const KernelContext& ctx) {
  const Tensor& idx = ctx.in(0);
  const Tensor& values = ctx.in(2);
  const int64_t depth = ctx.in(1).dtype() == DType::kFloat32 ? static_cast<int64_t>(ctx.in(1).data<float>()[0])
                                                             : ctx.in(1).int_at(0);
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, ctx.attrs().get_int("axis", -1));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(idx.shape().size()) + 1));
  Shape out = idx.shape();
  out.insert(out.begin() + axis, depth);
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{values.dtype(), out}));
  // The new axis goes before index dim `axis`: everything from there on is inner.
  const AxisSplit split = split_at_axis(idx.shape(), axis);
  const int64_t outer = split.outer, inner = split.len * split.inner;
  const size_t elem = dtype_size(values.dtype());
  const std::byte* off = values.raw();
  const std::byte* on = values.raw() + elem;
  std::byte* py = ctx.out(0).raw();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t at = o * inner + i;
      int64_t hot = idx.dtype() == DType::kFloat32 ? static_cast<int64_t>(idx.data<float>()[at]) : idx.int_at(at);
      if (hot < 0) hot += depth;
      for (int64_t j = 0; j < depth; ++j)
        std::memcpy(py + static_cast<size_t>((o * depth + j) * inner + i) * elem, j == hot ? on : off, elem);
    }
  return Status::ok();
}

Status eye_like_kernel(const KernelContext& ctx) {
  const Shape& s = ctx.in(0).shape();
  HS_ASSIGN_OR_RETURN(const int64_t k, ctx.attrs().get_int("k", 0));
  Tensor& y = ctx.out(0);
  if (y.shape() != s) return internal_error("EyeLike output shape " + y.type().to_string() + " is not the input's");
  for (int64_t r = 0; r < s[0]; ++r)
    for (int64_t c = 0; c < s[1]; ++c) {
      const bool one = c - r == k;
      switch (y.dtype()) {
        case DType::kFloat32: y.data<float>()[r * s[1] + c] = one ? 1.f : 0.f; break;
        case DType::kInt64: y.data<int64_t>()[r * s[1] + c] = one; break;
        case DType::kInt32: y.data<int32_t>()[r * s[1] + c] = one; break;
        default: return unsupported("EyeLike of " + y.type().to_string() + " is not supported");
      }
    }
  return Status::ok();
}

// Each batch entry's first sequence_lens[b] time steps in reverse order,
// the rest as they are; any element type (a copy of whole inner rows).
Status reverse_sequence_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& lens = ctx.in(1);
  HS_ASSIGN_OR_RETURN(const int64_t time_axis, ctx.attrs().get_int("time_axis", 0));
  const Shape& s = x.shape();
  if (s.size() < 2 || (time_axis != 0 && time_axis != 1) || lens.dtype() != DType::kInt64)
    return invalid_argument("ReverseSequence wants X of rank >= 2, time_axis 0 or 1 and i64 lengths, got " +
                            x.type().to_string() + ", " + std::to_string(time_axis) + ", " + lens.type().to_string());
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const int64_t T = s[static_cast<size_t>(time_axis)], B = s[static_cast<size_t>(1 - time_axis)];
  if (lens.num_elements() != B)
    return invalid_argument("sequence_lens has " + std::to_string(lens.num_elements()) + " entries for a batch of " +
                            std::to_string(B));
  const size_t row = static_cast<size_t>(shape_elements(Shape(s.begin() + 2, s.end()))) * dtype_size(x.dtype());
  // Bytes from one (t, b) row to the next along time and along batch.
  const size_t t_step = time_axis == 0 ? static_cast<size_t>(B) * row : row;
  const size_t b_step = time_axis == 0 ? row : static_cast<size_t>(T) * row;
  const std::byte* src = x.raw();
  std::byte* dst = ctx.out(0).raw();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = lens.data<int64_t>()[b];
    if (len < 0 || len > T)
      return invalid_argument("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                              " is outside [0, " + std::to_string(T) + "], the time axis' length");
    for (int64_t t = 0; t < T; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      if (row > 0)
        std::memcpy(dst + static_cast<size_t>(t) * t_step + static_cast<size_t>(b) * b_step,
                    src + static_cast<size_t>(from) * t_step + static_cast<size_t>(b) * b_step, row);
    }
  }
  return Status::ok();
}

}  // namespace

void register_misc_kernels(KernelTable& table) {
  table["GridSample"] = with_node_context(grid_sample_kernel);
  table["ReverseSequence"] = with_node_context(reverse_sequence_kernel);
  table["RoiAlign"] = with_node_context(roi_align_kernel);
  table["OneHot"] = with_node_context(one_hot_kernel);
  table["EyeLike"] = with_node_context(eye_like_kernel);
  table["LRN"] = with_node_context(lrn_kernel);
  table["Hardmax"] = with_node_context(hardmax_kernel);
  table["CastLike"] = with_node_context(cast_like_kernel);
  table["TopK"] = with_node_context(topk_kernel);
  table["GatherND"] = with_node_context(gather_nd_kernel);
  table["ScatterND"] = with_node_context(scatter_nd_kernel);
  table["ScatterElements"] = with_node_context(scatter_elements_kernel);
  table["Scatter"] = with_node_context(scatter_elements_kernel);  // its opset 9-10 name
  table["Size"] = with_node_context(size_kernel);
  table["Einsum"] = with_node_context(einsum_kernel);
  table["IsNaN"] = with_node_context(is_special(true));
  table["IsInf"] = with_node_context(is_special(false));
  table["DepthToSpace"] = with_node_context(depth_space_kernel);
  table["SpaceToDepth"] = with_node_context(depth_space_kernel);
  table["CumSum"] = with_node_context(cumsum_kernel);
  table["InstanceNormalization"] = with_node_context(instance_norm_kernel);
}

}  // namespace hetsched::cpu
