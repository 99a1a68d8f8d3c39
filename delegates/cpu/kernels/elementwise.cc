// Elementwise kernels: binary arithmetic with numpy broadcasting, and the
// unary math and activation functions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

namespace {

template <typename T, typename Op>
Status run_binary(const KernelContext& ctx, Op op) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  HS_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a.shape(), b.shape()));
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{a.dtype(), std::move(shape)}));
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* py = ctx.out(0).data<T>();
  for_each_broadcast_row(a.shape(), b.shape(), ctx.out(0).shape(),
                         [&](int64_t out, int64_t ao, int64_t as, int64_t bo, int64_t bs, int64_t n) {
                           // The unit-step case is split out so the compiler vectorises it.
                           if (as == 1 && bs == 1) {
                             for (int64_t j = 0; j < n; ++j) py[out + j] = op(pa[ao + j], pb[bo + j]);
                           } else {
                             for (int64_t j = 0; j < n; ++j) py[out + j] = op(pa[ao + j * as], pb[bo + j * bs]);
                           }
                         });
  return Status::ok();
}

Status check_same_dtype(const KernelContext& ctx) {
  if (ctx.in(0).dtype() != ctx.in(1).dtype())
    return invalid_argument("input types differ: A is " + ctx.in(0).type().to_string() + ", B is " +
                            ctx.in(1).type().to_string());
  return Status::ok();
}

// Add, Sub, Mul and Div: one functor serves f32, i64 and i32.
template <typename Op>
KernelFn arithmetic_kernel(Op op) {
  return [op](const KernelContext& ctx) -> Status {
    HS_RETURN_IF_ERROR(check_same_dtype(ctx));
    switch (ctx.in(0).dtype()) {
      case DType::kFloat32:
        return run_binary<float>(ctx, op);
      case DType::kInt64:
        return run_binary<int64_t>(ctx, op);
      case DType::kInt32:
        return run_binary<int32_t>(ctx, op);
      default:
        return invalid_argument("expects f32, i64 or i32 inputs, got " + ctx.in(0).type().to_string());
    }
  };
}

// Integer division by zero is undefined behaviour in C++, and so is the
// one quotient past the type's range (min / -1): both are refused up front.
template <typename T>
Status int_div(const KernelContext& ctx) {
  for (T v : ctx.in(1).span<T>())
    if (v == 0) return invalid_argument("integer division by zero");
  bool overflow = false;
  HS_RETURN_IF_ERROR(run_binary<T>(ctx, [&overflow](T a, T b) {
    if (a == std::numeric_limits<T>::min() && b == -1) {
      overflow = true;
      return a;
    }
    return static_cast<T>(a / b);
  }));
  if (overflow) return invalid_argument("integer division overflows (the type's minimum by -1)");
  return Status::ok();
}

Status div_kernel(const KernelContext& ctx) {
  HS_RETURN_IF_ERROR(check_same_dtype(ctx));
  if (ctx.in(0).dtype() == DType::kInt64) return int_div<int64_t>(ctx);
  if (ctx.in(0).dtype() == DType::kInt32) return int_div<int32_t>(ctx);
  if (ctx.in(0).dtype() != DType::kFloat32)
    return invalid_argument("expects f32 or i64 inputs, got " + ctx.in(0).type().to_string());
  return run_binary<float>(ctx, [](float a, float b) { return a / b; });
}

// An f32, i64 or i32 element as double, and a double back to T; integers
// saturate (a power past the type's range has no defined conversion).
double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kInt32: return static_cast<double>(t.data<int32_t>()[i]);
    default: return static_cast<double>(t.data<float>()[i]);
  }
}
template <typename T>
T from_double(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return 0;
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    return v <= lo ? std::numeric_limits<T>::min() : v >= hi ? std::numeric_limits<T>::max() : static_cast<T>(v);
  }
}

// Pow: f32 ** f32 as before; any other mix of f32, i64 and i32 (opset 12
// on) in double, to the base's type, as ONNX Runtime computes it.
Status pow_kernel(const KernelContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  if (a.dtype() == DType::kFloat32 && b.dtype() == DType::kFloat32)
    return run_binary<float>(ctx, [](float x, float y) { return std::pow(x, y); });
  for (const Tensor* t : {&a, &b})
    if (t->dtype() != DType::kFloat32 && t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)
      return invalid_argument("expects f32, i64 or i32 inputs, got " + t->type().to_string());
  HS_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a.shape(), b.shape()));
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{a.dtype(), std::move(shape)}));
  Tensor& y = ctx.out(0);
  const std::vector<int64_t> sa = broadcast_strides(a.shape(), y.shape()), sb = broadcast_strides(b.shape(), y.shape());
  const Shape& ys = y.shape();
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    int64_t ia = 0, ib = 0;
    for (int64_t rest = i, d = static_cast<int64_t>(ys.size()) - 1; d >= 0; --d) {
      const int64_t c = rest % ys[static_cast<size_t>(d)];
      rest /= ys[static_cast<size_t>(d)];
      ia += c * sa[static_cast<size_t>(d)];
      ib += c * sb[static_cast<size_t>(d)];
    }
    const double v = std::pow(element_as_double(a, ia), element_as_double(b, ib));
    switch (y.dtype()) {
      case DType::kInt64: y.data<int64_t>()[i] = from_double<int64_t>(v); break;
      case DType::kInt32: y.data<int32_t>()[i] = from_double<int32_t>(v); break;
      default: y.data<float>()[i] = from_double<float>(v); break;
    }
  }
  return Status::ok();
}


template <typename Op>
Status run_unary(const KernelContext& ctx, Op op) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat32) return invalid_argument("input must be f32, got " + x.type().to_string());
  HS_RETURN_IF_ERROR(check_output(ctx, 0, x.type()));
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_chunks(x.num_elements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) py[i] = op(px[i]);
  });
  return Status::ok();
}

template <typename Op>
KernelFn unary_kernel(Op op) {
  return [op](const KernelContext& ctx) { return run_unary(ctx, op); };
}

// Neg and Abs of integers wrap as numpy's do (the type's minimum stays
// itself), through unsigned arithmetic: -min is undefined in C++.
template <typename T>
Status int_unary(const KernelContext& ctx, bool abs) {
  const Tensor& x = ctx.in(0);
  HS_RETURN_IF_ERROR(check_output(ctx, 0, x.type()));
  using U = std::make_unsigned_t<T>;
  const T* px = x.data<T>();
  T* py = ctx.out(0).data<T>();
  for (int64_t i = 0; i < x.num_elements(); ++i)
    py[i] = abs && px[i] >= 0 ? px[i] : static_cast<T>(U{0} - static_cast<U>(px[i]));
  return Status::ok();
}

KernelFn sign_kernel(bool abs) {
  return [abs](const KernelContext& ctx) -> Status {
    switch (ctx.in(0).dtype()) {
      case DType::kInt64: return int_unary<int64_t>(ctx, abs);
      case DType::kInt32: return int_unary<int32_t>(ctx, abs);
      default: break;
    }
    if (abs) return run_unary(ctx, [](float x) { return std::abs(x); });
    return run_unary(ctx, [](float x) { return -x; });
  };
}

Status hard_sigmoid_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const float alpha, ctx.attrs().get_float("alpha", 0.2f));
  HS_ASSIGN_OR_RETURN(const float beta, ctx.attrs().get_float("beta", 0.5f));
  return run_unary(ctx, [=](float x) { return std::max(0.f, std::min(1.f, alpha * x + beta)); });
}

// ONNX Gelu (opset 20), in double so the reference loses nothing:
// x/2 (1 + erf(x/sqrt 2)), or with approximate "tanh"
// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Status gelu_kernel(const KernelContext& ctx) {
  Result<std::string> approximate = ctx.attrs().get_string("approximate", "none");
  if (!approximate.is_ok()) return approximate.status();
  const bool use_tanh = approximate.value() == "tanh";
  if (!use_tanh && approximate.value() != "none")
    return invalid_argument("attribute 'approximate' is '" + approximate.value() + "', expected none or tanh");
  if (use_tanh) {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    return run_unary(ctx, [=](float x) {
      const double v = x;
      return static_cast<float>(0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v))));
    });
  }
  return run_unary(ctx, [](float x) {
    const double v = x;
    return static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  });
}

// Reads Clip's bound from input `i` (opset >= 11) when it is given.
Result<float> clip_bound(const KernelContext& ctx, size_t i, float fallback) {
  if (!ctx.has_input(i)) return fallback;
  const Tensor& t = ctx.in(i);
  if (t.dtype() != DType::kFloat32 || t.num_elements() != 1)
    return invalid_argument("input " + std::to_string(i) + " must be an f32 scalar, got " + t.type().to_string());
  return t.data<float>()[0];
}

Status clip_kernel(const KernelContext& ctx) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float lo = -kInf, hi = kInf;
  if (ctx.opset <= 10) {
    HS_ASSIGN_OR_RETURN(lo, ctx.attrs().get_float("min", -kInf));
    HS_ASSIGN_OR_RETURN(hi, ctx.attrs().get_float("max", kInf));
  } else {
    HS_ASSIGN_OR_RETURN(lo, clip_bound(ctx, 1, -kInf));
    HS_ASSIGN_OR_RETURN(hi, clip_bound(ctx, 2, kInf));
  }
  // max before min, as numpy.clip: with lo > hi every element becomes hi.
  return run_unary(ctx, [=](float x) { return std::min(std::max(x, lo), hi); });
}

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  table["Add"] = with_node_context(arithmetic_kernel([](auto a, auto b) { return a + b; }));
  table["Sub"] = with_node_context(arithmetic_kernel([](auto a, auto b) { return a - b; }));
  table["Mul"] = with_node_context(arithmetic_kernel([](auto a, auto b) { return a * b; }));
  table["Div"] = with_node_context(div_kernel);
  table["Pow"] = with_node_context(pow_kernel);

  table["Relu"] = with_node_context(unary_kernel([](float x) { return std::max(x, 0.f); }));
  table["Sigmoid"] = with_node_context(unary_kernel([](float x) { return 1.f / (1.f + std::exp(-x)); }));
  table["Tanh"] = with_node_context(unary_kernel([](float x) { return std::tanh(x); }));
  table["Exp"] = with_node_context(unary_kernel([](float x) { return std::exp(x); }));
  table["Sin"] = with_node_context(unary_kernel([](float x) { return std::sin(x); }));
  table["Cos"] = with_node_context(unary_kernel([](float x) { return std::cos(x); }));
  table["Reciprocal"] = with_node_context(unary_kernel([](float x) { return 1.f / x; }));
  table["Sqrt"] = with_node_context(unary_kernel([](float x) { return std::sqrt(x); }));
  table["Neg"] = with_node_context(sign_kernel(false));
  table["Abs"] = with_node_context(sign_kernel(true));
  // ONNX HardSwish is x * HardSigmoid(x) with alpha 1/6, beta 0.5.
  table["HardSwish"] =
      with_node_context(unary_kernel([](float x) { return x * std::max(0.f, std::min(1.f, x * (1.f / 6.f) + 0.5f)); }));
  table["HardSigmoid"] = with_node_context(hard_sigmoid_kernel);
  table["Clip"] = with_node_context(clip_kernel);
  table["Gelu"] = with_node_context(gelu_kernel);
}

}  // namespace hetsched::cpu
