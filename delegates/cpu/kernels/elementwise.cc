// Elementwise kernels: binary arithmetic with numpy broadcasting, and the
// unary math and activation functions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

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

// Add, Sub, Mul and Div: one functor serves f32 and i64.
template <typename Op>
KernelFn arithmetic_kernel(Op op) {
  return [op](const KernelContext& ctx) -> Status {
    HS_RETURN_IF_ERROR(check_same_dtype(ctx));
    switch (ctx.in(0).dtype()) {
      case DType::kFloat32:
        return run_binary<float>(ctx, op);
      case DType::kInt64:
        return run_binary<int64_t>(ctx, op);
      default:
        return invalid_argument("expects f32 or i64 inputs, got " + ctx.in(0).type().to_string());
    }
  };
}

Status div_kernel(const KernelContext& ctx) {
  HS_RETURN_IF_ERROR(check_same_dtype(ctx));
  if (ctx.in(0).dtype() == DType::kInt64) {
    // Integer division by zero is undefined behaviour in C++; refuse it up front.
    for (int64_t v : ctx.in(1).span<int64_t>())
      if (v == 0) return invalid_argument("integer division by zero");
    return run_binary<int64_t>(ctx, [](int64_t a, int64_t b) { return a / b; });
  }
  if (ctx.in(0).dtype() != DType::kFloat32)
    return invalid_argument("expects f32 or i64 inputs, got " + ctx.in(0).type().to_string());
  return run_binary<float>(ctx, [](float a, float b) { return a / b; });
}

Status pow_kernel(const KernelContext& ctx) {
  HS_RETURN_IF_ERROR(check_same_dtype(ctx));
  if (ctx.in(0).dtype() != DType::kFloat32)
    return invalid_argument("expects f32 inputs, got " + ctx.in(0).type().to_string());
  return run_binary<float>(ctx, [](float a, float b) { return std::pow(a, b); });
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
  table["Neg"] = with_node_context(unary_kernel([](float x) { return -x; }));
  table["Abs"] = with_node_context(unary_kernel([](float x) { return std::abs(x); }));
  // ONNX HardSwish is x * HardSigmoid(x) with alpha 1/6, beta 0.5.
  table["HardSwish"] =
      with_node_context(unary_kernel([](float x) { return x * std::max(0.f, std::min(1.f, x * (1.f / 6.f) + 0.5f)); }));
  table["HardSigmoid"] = with_node_context(hard_sigmoid_kernel);
  table["Clip"] = with_node_context(clip_kernel);
  table["Gelu"] = with_node_context(gelu_kernel);
}

}  // namespace hetsched::cpu
