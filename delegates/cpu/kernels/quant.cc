// The quantization kernels: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, and the QOperator ops QLinearConv, QLinearMatMul,
// ConvInteger and MatMulInteger.
//
// Rounding is ONNX's: round half to even (std::nearbyint under the default
// rounding mode), then saturation to the output type. The integer ops
// accumulate (x - x_zero_point) * (w - w_zero_point) in int32, as the ONNX
// reference does: u8/i8 products summed in f32 are exact only up to 2^24,
// which a 3x3x256 conv can pass. QLinearConv and QLinearMatMul then
// requantize the int32 sums with the f32 multiplier
// (x_scale * w_scale / y_scale), the product taken in double as the ONNX
// reference's numpy does (int32 array times f32 scale gives f64).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/op_schema.h"
#include "graph/ops_quant.h"

namespace hetsched::cpu {

namespace {

// Element i of a u8, i8 or i32 tensor, widened.
inline int32_t int_element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kInt8: return t.data<int8_t>()[i];
    default: return t.data<int32_t>()[i];
  }
}

// All elements of a u8/i8/i32 tensor widened to int32, less `zero_point`
// (element i reads zero_point[zp_of(i)]: per tensor, row, column or
// channel).
template <typename ZpOf>
std::vector<int32_t> centred(const Tensor& t, const Tensor* zero_point, ZpOf zp_of) {
  std::vector<int32_t> out(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i)
    out[static_cast<size_t>(i)] = int_element(t, i) - (zero_point ? int_element(*zero_point, zp_of(i)) : 0);
  return out;
}

// Rounds half to even and saturates to u8 or i8.
template <typename Q>
inline Q saturate_round(double v) {
  constexpr double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  if (std::isnan(v)) return 0;
  return static_cast<Q>(std::clamp(std::nearbyint(v), lo, hi));
}

// y = saturate(round(x / scale) + zero_point), as ONNX: the division in f32,
// then rounding, then the zero point added.
template <typename Q>
void quantize_span(const float* x, int64_t n, float scale, int32_t zp, Q* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float q = std::nearbyint(x[i] / scale);
    y[i] = saturate_round<Q>(static_cast<double>(q) + zp);
  }
}

// The per-axis view of a QuantizeLinear/DequantizeLinear node: the tensor
// as (outer, len, inner) around the scale's axis (len 1, one scale, when
// per-tensor).
Result<AxisSplit> quant_split(const KernelContext& ctx, const Shape& x) {
  const TensorType* zp = ctx.has_input(2) ? &ctx.in(2).type() : nullptr;
  HS_ASSIGN_OR_RETURN(const int64_t axis, quant_axis(ctx.attrs(), ctx.opset, x, ctx.in(1).type(), zp));
  if (axis < 0) return AxisSplit{1, 1, shape_elements(x)};
  return split_at_axis(x, axis);
}

Status quantize_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor* zp = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  HS_ASSIGN_OR_RETURN(const DType out_dtype, quantize_output_dtype(ctx.attrs(), zp ? &zp->type() : nullptr));
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{out_dtype, x.shape()}));
  HS_ASSIGN_OR_RETURN(const AxisSplit s, quant_split(ctx, x.shape()));
  const float* scale = ctx.in(1).data<float>();
  Tensor& y = ctx.out(0);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t k = 0; k < s.len; ++k) {
      const int64_t offset = (o * s.len + k) * s.inner;
      const int32_t z = zp ? int_element(*zp, k) : 0;
      if (out_dtype == DType::kUInt8)
        quantize_span(x.data<float>() + offset, s.inner, scale[k], z, y.data<uint8_t>() + offset);
      else
        quantize_span(x.data<float>() + offset, s.inner, scale[k], z, y.data<int8_t>() + offset);
    }
  return Status::ok();
}

// y = (x - zero_point) * scale, in f32 as ONNX.
Status dequantize_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor* zp = ctx.has_input(2) ? &ctx.in(2) : nullptr;
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, x.shape()}));
  if (!is_quant8(x.dtype()) && x.dtype() != DType::kInt32)
    return invalid_argument("input x must be u8, i8 or i32, got " + x.type().to_string());
  HS_ASSIGN_OR_RETURN(const AxisSplit s, quant_split(ctx, x.shape()));
  const float* scale = ctx.in(1).data<float>();
  float* y = ctx.out(0).data<float>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t k = 0; k < s.len; ++k) {
      const int64_t offset = (o * s.len + k) * s.inner;
      const int64_t z = zp ? int_element(*zp, k) : 0;
      for (int64_t i = offset; i < offset + s.inner; ++i)
        y[i] = static_cast<float>(int64_t{int_element(x, i)} - z) * scale[k];
    }
  return Status::ok();
}

// DynamicQuantizeLinear: u8 over [min(x, 0), max(x, 0)], as the ONNX
// function: scale = (max - min) / 255, zero_point = saturate(round(-min /
// scale)), y = saturate(round(x / scale) + zero_point). An all-zero x would
// give scale 0; ONNX Runtime then uses scale 1 (every y and the zero point
// are 0 either way), and so does this.
Status dynamic_quantize_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kUInt8, x.shape()}));
  HS_RETURN_IF_ERROR(check_output(ctx, 1, TensorType{DType::kFloat32, {}}));
  HS_RETURN_IF_ERROR(check_output(ctx, 2, TensorType{DType::kUInt8, {}}));
  float lo = 0.f, hi = 0.f;
  for (float v : x.span<float>()) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  float scale = (hi - lo) / 255.f;
  if (scale == 0.f) scale = 1.f;
  const uint8_t zp = saturate_round<uint8_t>(static_cast<double>(std::nearbyint(0.f - lo / scale)));
  quantize_span(x.data<float>(), x.num_elements(), scale, zp, ctx.out(0).data<uint8_t>());
  ctx.out(1).data<float>()[0] = scale;
  ctx.out(2).data<uint8_t>()[0] = zp;
  return Status::ok();
}

// An int32 convolution of centred x (N, C, H, W) and centred w (M, C/group,
// KH, KW) into acc (N, M, OH, OW). For each (image, output channel) the
// taps are added one at a time over whole output rows, so the inner loop
// runs along the output width (contiguous for stride 1).
void conv_int32(const std::vector<int32_t>& x, const std::vector<int32_t>& w, int64_t n, int64_t c, int64_t m,
                int64_t group, const WindowGeometry& g, int32_t* acc) {
  const int64_t cg = c / group, mg = m / group;
  const int64_t plane = g.out_h * g.out_w;
  parallel_for_each(n * m, [&](int64_t task) {
    const int64_t img = task / m, oc = task % m, grp = oc / mg;
    int32_t* out = acc + task * plane;
    std::fill(out, out + plane, 0);
    for (int64_t ic = 0; ic < cg; ++ic) {
      const int32_t* xc = x.data() + ((img * c) + grp * cg + ic) * g.in_h * g.in_w;
      const int32_t* wc = w.data() + ((oc * cg) + ic) * g.kernel_h * g.kernel_w;
      for (int64_t kh = 0; kh < g.kernel_h; ++kh)
        for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
          const int32_t wv = wc[kh * g.kernel_w + kw];
          if (wv == 0) continue;
          // Output columns whose tap lands inside the input row.
          const int64_t shift = kw * g.dilation_w - g.pad_left;  // iw = ow * stride + shift
          int64_t ow_begin = shift >= 0 ? 0 : (-shift + g.stride_w - 1) / g.stride_w;
          int64_t ow_end = g.in_w - shift <= 0 ? 0 : (g.in_w - shift + g.stride_w - 1) / g.stride_w;
          ow_end = std::min(ow_end, g.out_w);
          if (ow_begin >= ow_end) continue;
          for (int64_t oh = 0; oh < g.out_h; ++oh) {
            const int64_t ih = oh * g.stride_h + kh * g.dilation_h - g.pad_top;
            if (ih < 0 || ih >= g.in_h) continue;
            const int32_t* row = xc + ih * g.in_w;
            int32_t* o = out + oh * g.out_w;
            for (int64_t ow = ow_begin; ow < ow_end; ++ow) o[ow] += wv * row[ow * g.stride_w + shift];
          }
        }
    }
  });
}

// The geometry and centred operands of QLinearConv (inputs x 0, w 3, zero
// points 2 and 5) and ConvInteger (x 0, w 1, zero points 2 and 3).
struct IntConv {
  WindowGeometry geometry;
  std::vector<int32_t> x, w;
  int64_t n = 0, c = 0, m = 0, group = 1, plane = 0;
};

Result<IntConv> prepare_int_conv(const KernelContext& ctx, size_t w_index, size_t x_zp_index, size_t w_zp_index) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(w_index);
  const Shape& y = ctx.out(0).shape();
  IntConv conv;
  HS_ASSIGN_OR_RETURN(conv.group, ctx.attrs().get_int("group", 1));
  HS_ASSIGN_OR_RETURN(conv.geometry, window_geometry(ctx, x.shape(), Shape(w.shape().begin() + 2, w.shape().end()),
                                                     y, false));
  conv.n = x.shape()[0];
  conv.c = x.shape()[1];
  conv.m = w.shape()[0];
  conv.plane = conv.geometry.out_h * conv.geometry.out_w;
  const Tensor* x_zp = ctx.has_input(x_zp_index) ? &ctx.in(x_zp_index) : nullptr;
  const Tensor* w_zp = ctx.has_input(w_zp_index) ? &ctx.in(w_zp_index) : nullptr;
  conv.x = centred(x, x_zp, [](int64_t) { return int64_t{0}; });
  const int64_t per_oc = w.num_elements() / std::max<int64_t>(conv.m, 1);
  const bool w_per_channel = w_zp && w_zp->num_elements() > 1;
  conv.w = centred(w, w_zp, [&](int64_t i) { return w_per_channel ? i / per_oc : int64_t{0}; });
  return conv;
}

Status conv_integer_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const IntConv conv, prepare_int_conv(ctx, 1, 2, 3));
  if (ctx.out(0).dtype() != DType::kInt32) return invalid_argument("output must be i32, got " + ctx.out(0).type().to_string());
  conv_int32(conv.x, conv.w, conv.n, conv.c, conv.m, conv.group, conv.geometry, ctx.out(0).data<int32_t>());
  return Status::ok();
}

// y = saturate(round(acc * multiplier) + y_zero_point) over a span of
// int32 sums.
template <typename Q>
void requantize(const int32_t* acc, int64_t n, double multiplier, int32_t y_zp, Q* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = saturate_round<Q>(static_cast<double>(acc[i]) * multiplier + y_zp);
}

// The f32 requantization multiplier x_scale * w_scale / y_scale, computed
// in f32 as the ONNX reference does.
inline double multiplier_of(float a_scale, float b_scale, float y_scale) {
  return static_cast<double>(a_scale * b_scale / y_scale);
}

Status qlinear_conv_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const IntConv conv, prepare_int_conv(ctx, 3, 2, 5));
  std::vector<int32_t> acc(static_cast<size_t>(conv.n * conv.m * conv.plane));
  conv_int32(conv.x, conv.w, conv.n, conv.c, conv.m, conv.group, conv.geometry, acc.data());
  const float x_scale = ctx.in(1).data<float>()[0];
  const Tensor& w_scale = ctx.in(4);
  const float y_scale = ctx.in(6).data<float>()[0];
  const int32_t y_zp = int_element(ctx.in(7), 0);
  const int32_t* bias = ctx.has_input(8) ? ctx.in(8).data<int32_t>() : nullptr;
  Tensor& y = ctx.out(0);
  for (int64_t img = 0; img < conv.n; ++img)
    for (int64_t oc = 0; oc < conv.m; ++oc) {
      const int64_t offset = (img * conv.m + oc) * conv.plane;
      int32_t* a = acc.data() + offset;
      if (bias)
        for (int64_t i = 0; i < conv.plane; ++i) a[i] += bias[oc];
      const float ws = w_scale.data<float>()[w_scale.num_elements() > 1 ? oc : 0];
      const double mult = multiplier_of(x_scale, ws, y_scale);
      if (y.dtype() == DType::kUInt8)
        requantize(a, conv.plane, mult, y_zp, y.data<uint8_t>() + offset);
      else
        requantize(a, conv.plane, mult, y_zp, y.data<int8_t>() + offset);
    }
  return Status::ok();
}

// An int32 numpy matmul of A (..., M, K) and B (..., K, N) with batch
// broadcasting (1-D operands promoted as numpy does), zero points per
// tensor, per row of A or per column of B. run_int_matmul calls
// done(output offset, row of A, sums) with each row of N int32 sums.
struct IntMatMul {
  int64_t m = 1, k = 1, n = 1;
  Shape batch;  // the output's batch dims
  std::vector<int32_t> a, b;
  std::vector<int64_t> a_batch_strides, b_batch_strides;  // per batch dim, in whole matrices
};

Result<IntMatMul> prepare_int_matmul(const KernelContext& ctx, size_t b_index, size_t a_zp_index,
                                     size_t b_zp_index) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(b_index);
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  if (as.empty() || bs.empty()) return invalid_argument("inputs must be at least 1-D");
  IntMatMul mm;
  mm.m = as.size() >= 2 ? as[as.size() - 2] : 1;
  mm.k = as.back();
  mm.n = bs.size() >= 2 ? bs.back() : 1;
  const int64_t kb = bs.size() >= 2 ? bs[bs.size() - 2] : bs[0];
  if (kb != mm.k) return invalid_argument("inner dimensions differ: " + a.type().to_string() + " and " + b.type().to_string());
  const Shape a_batch(as.begin(), as.end() - std::min<size_t>(as.size(), 2));
  const Shape b_batch(bs.begin(), bs.end() - std::min<size_t>(bs.size(), 2));
  HS_ASSIGN_OR_RETURN(mm.batch, broadcast_shapes(a_batch, b_batch));
  mm.a_batch_strides = broadcast_strides(a_batch, mm.batch);
  mm.b_batch_strides = broadcast_strides(b_batch, mm.batch);
  const Tensor* a_zp = ctx.has_input(a_zp_index) ? &ctx.in(a_zp_index) : nullptr;
  const Tensor* b_zp = ctx.has_input(b_zp_index) ? &ctx.in(b_zp_index) : nullptr;
  const bool a_per_row = a_zp && a_zp->num_elements() > 1;
  const bool b_per_col = b_zp && b_zp->num_elements() > 1;
  const int64_t m = mm.m, k = mm.k, n = mm.n;
  mm.a = centred(a, a_zp, [&](int64_t i) { return a_per_row ? (i / k) % m : int64_t{0}; });
  mm.b = centred(b, b_zp, [&](int64_t i) { return b_per_col ? i % n : int64_t{0}; });
  return mm;
}

template <typename RowFn>
void run_int_matmul(const IntMatMul& mm, RowFn&& done) {
  const int64_t batches = shape_elements(mm.batch);
  parallel_for_each(batches * mm.m, [&](int64_t task) {
    const int64_t bi = task / mm.m, row = task % mm.m;
    // Offsets of this batch's matrices in A and B (in whole matrices).
    int64_t a_off = 0, b_off = 0, rest = bi;
    for (size_t d = mm.batch.size(); d-- > 0;) {
      const int64_t idx = rest % mm.batch[d];
      rest /= mm.batch[d];
      a_off += idx * mm.a_batch_strides[d];
      b_off += idx * mm.b_batch_strides[d];
    }
    const int32_t* a = mm.a.data() + (a_off * mm.m + row) * mm.k;
    const int32_t* b = mm.b.data() + b_off * mm.k * mm.n;
    std::vector<int32_t> acc(static_cast<size_t>(mm.n), 0);
    for (int64_t kk = 0; kk < mm.k; ++kk) {
      const int32_t av = a[kk];
      const int32_t* brow = b + kk * mm.n;
      for (int64_t j = 0; j < mm.n; ++j) acc[static_cast<size_t>(j)] += av * brow[j];
    }
    done(task * mm.n, row, acc.data());
  });
}

Status matmul_integer_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const IntMatMul mm, prepare_int_matmul(ctx, 1, 2, 3));
  if (ctx.out(0).dtype() != DType::kInt32) return invalid_argument("output must be i32, got " + ctx.out(0).type().to_string());
  int32_t* y = ctx.out(0).data<int32_t>();
  run_int_matmul(mm, [&](int64_t offset, int64_t, const int32_t* acc) { std::copy(acc, acc + mm.n, y + offset); });
  return Status::ok();
}

Status qlinear_matmul_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const IntMatMul mm, prepare_int_matmul(ctx, 3, 2, 5));
  const Tensor& a_scale = ctx.in(1);
  const Tensor& b_scale = ctx.in(4);
  const float y_scale = ctx.in(6).data<float>()[0];
  const int32_t y_zp = int_element(ctx.in(7), 0);
  Tensor& y = ctx.out(0);
  run_int_matmul(mm, [&](int64_t offset, int64_t row, const int32_t* acc) {
    const float as = a_scale.data<float>()[a_scale.num_elements() > 1 ? row : 0];
    for (int64_t j = 0; j < mm.n; ++j) {
      const float bs = b_scale.data<float>()[b_scale.num_elements() > 1 ? j : 0];
      const double v = static_cast<double>(acc[j]) * multiplier_of(as, bs, y_scale) + y_zp;
      if (y.dtype() == DType::kUInt8)
        y.data<uint8_t>()[offset + j] = saturate_round<uint8_t>(v);
      else
        y.data<int8_t>()[offset + j] = saturate_round<int8_t>(v);
    }
  });
  return Status::ok();
}

}  // namespace

void register_quant_kernels(KernelTable& table) {
  table["QuantizeLinear"] = with_node_context(quantize_kernel);
  table["DequantizeLinear"] = with_node_context(dequantize_kernel);
  table["DynamicQuantizeLinear"] = with_node_context(dynamic_quantize_kernel);
  table["QLinearConv"] = with_node_context(qlinear_conv_kernel);
  table["QLinearMatMul"] = with_node_context(qlinear_matmul_kernel);
  table["ConvInteger"] = with_node_context(conv_integer_kernel);
  table["MatMulInteger"] = with_node_context(matmul_integer_kernel);
}

}  // namespace hetsched::cpu
