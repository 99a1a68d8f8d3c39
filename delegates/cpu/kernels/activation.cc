// Portable kernels of graph/ops_activation.cc: one f32 → f32 function per
// op, with ONNX's default attributes, over the pool in chunks.
#include <algorithm>
#include <cmath>

#include "delegates/cpu/kernel.h"
#include "delegates/cpu/kernels/extra_util.h"

namespace hetsched::cpu {

namespace {

// Applies op(x, a, b) elementwise; a and b are the op's float attributes
// (their ONNX defaults when absent).
template <typename Op>
KernelFn activation(const char* a_name, float a_default, const char* b_name, float b_default, Op op) {
  return [=](const KernelContext& ctx) -> Status {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::kFloat32) return invalid_argument("input must be f32, got " + x.type().to_string());
    float a = a_default, b = b_default;
    if (a_name) {
      HS_ASSIGN_OR_RETURN(a, ctx.attrs().get_float(a_name, a_default));
    }
    if (b_name) {
      HS_ASSIGN_OR_RETURN(b, ctx.attrs().get_float(b_name, b_default));
    }
    HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
    const float* px = x.data<float>();
    float* py = ctx.out(0).data<float>();
    parallel_chunks(x.num_elements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) py[i] = op(px[i], a, b);
    });
    return Status::ok();
  };
}

template <typename F>
KernelFn plain(F f) {
  return activation(nullptr, 0.f, nullptr, 0.f, [f](float x, float, float) { return f(x); });
}

// log(1 + e^x) without overflow: x itself once e^x swamps the 1.
float softplus(float x) { return x > 20.f ? x : std::log1p(std::exp(x)); }

}  // namespace

void register_activation_kernels(KernelTable& table) {
  table["Tan"] = with_node_context(plain([](float x) { return std::tan(x); }));
  table["Asin"] = with_node_context(plain([](float x) { return std::asin(x); }));
  table["Acos"] = with_node_context(plain([](float x) { return std::acos(x); }));
  table["Atan"] = with_node_context(plain([](float x) { return std::atan(x); }));
  table["Sinh"] = with_node_context(plain([](float x) { return std::sinh(x); }));
  table["Cosh"] = with_node_context(plain([](float x) { return std::cosh(x); }));
  table["Asinh"] = with_node_context(plain([](float x) { return std::asinh(x); }));
  table["Acosh"] = with_node_context(plain([](float x) { return std::acosh(x); }));
  table["Atanh"] = with_node_context(plain([](float x) { return std::atanh(x); }));
  table["Sign"] = with_node_context(plain([](float x) { return x > 0.f ? 1.f : x < 0.f ? -1.f : x; }));
  table["Softplus"] = with_node_context(plain(softplus));
  table["Softsign"] = with_node_context(plain([](float x) { return x / (1.f + std::fabs(x)); }));
  table["Mish"] = with_node_context(plain([](float x) { return x * std::tanh(softplus(x)); }));
  table["Elu"] = with_node_context(
      activation("alpha", 1.f, nullptr, 0.f, [](float x, float a, float) { return x < 0.f ? a * std::expm1(x) : x; }));
  table["Selu"] = with_node_context(activation("alpha", 1.67326319217681884765625f, "gamma",
                                                1.05070102214813232421875f, [](float x, float a, float g) {
                                                  return g * (x > 0.f ? x : a * std::expm1(x));
                                                }));
  table["Celu"] = with_node_context(activation("alpha", 1.f, nullptr, 0.f, [](float x, float a, float) {
    return std::max(0.f, x) + std::min(0.f, a * std::expm1(x / a));
  }));
  table["ThresholdedRelu"] = with_node_context(
      activation("alpha", 1.f, nullptr, 0.f, [](float x, float a, float) { return x > a ? x : 0.f; }));
  table["Shrink"] = with_node_context(activation("bias", 0.f, "lambd", 0.5f, [](float x, float bias, float lambd) {
    return x < -lambd ? x + bias : x > lambd ? x - bias : 0.f;
  }));
}

}  // namespace hetsched::cpu
