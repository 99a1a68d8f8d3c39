// Kernels of the extra ops (graph/ops_extra.cc), elementwise part: Cast,
// comparisons and logic, the further unary math, LeakyRelu, PRelu, the
// variadic Min/Max/Sum/Mean and Dropout (inference: a copy). The data
// movement, reduction and ConvTranspose kernels live in extra_tensor.cc,
// extra_reduce.cc and extra_conv_transpose.cc and are registered from here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "delegates/cpu/kernels/extra_util.h"
#include "graph/ops_extra.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

namespace {

// --- Cast --------------------------------------------------------------------------

// float → integer truncates toward zero as numpy's astype does; NaN becomes
// 0 and values beyond int64 saturate, which C++ would leave undefined.
// Narrower integer targets then wrap modulo 2^n, as numpy does.
int64_t float_to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

template <typename T>
void store_int(Tensor& out, int64_t i, int64_t v) {
  out.data<T>()[i] = static_cast<T>(v);
}

Status cast_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const int64_t to, ctx.attrs().require_int("to"));
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int>(to));
  if (!dtype) return unsupported("attribute 'to' = " + std::to_string(to) + " is not a supported target");
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{*dtype, x.shape()}));
  Tensor& y = ctx.out(0);
  if (x.dtype() == *dtype) {
    std::memcpy(y.raw(), x.raw(), x.byte_size());
    return Status::ok();
  }
  // 16-bit floats (f16, bf16) go through f32: widened exactly on the way in,
  // rounded to nearest even from the f32 result on the way out. An integer
  // becomes an f16 exactly as directly (every integer below 65520 is an
  // exact f32; above, both give inf); a bf16 gets the f32 rounding first,
  // as ONNX Runtime's does.
  const bool from_float = x.dtype() == DType::kFloat32 || is_half_float(x.dtype());
  parallel_chunks(x.num_elements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float fx = x.dtype() == DType::kFloat32 ? x.data<float>()[i]
                       : from_float                 ? half_float_to_float(x.dtype(), x.data<uint16_t>()[i])
                                                    : 0.f;
      const double f = static_cast<double>(fx);
      const int64_t n = from_float ? float_to_int64(f) : x.int_at(i);
      switch (*dtype) {
        case DType::kFloat32:
          y.data<float>()[i] = from_float ? fx : static_cast<float>(n);
          break;
        case DType::kFloat16:
        case DType::kBFloat16:
          y.data<uint16_t>()[i] = float_to_half_float(*dtype, from_float ? fx : static_cast<float>(n));
          break;
        case DType::kBool:
          y.data<uint8_t>()[i] = from_float ? (f != 0.0) : (n != 0);
          break;
        case DType::kInt64:
          store_int<int64_t>(y, i, n);
          break;
        case DType::kInt32:
          store_int<int32_t>(y, i, n);
          break;
        case DType::kUInt8:
          store_int<uint8_t>(y, i, n);
          break;
        case DType::kInt8:
          store_int<int8_t>(y, i, n);
          break;
      }
    }
  });
  return Status::ok();
}

// --- comparisons and logic --------------------------------------------------------------

// Runs out[i] = op(a[i], b[i]) over the broadcast of a and b, with a and b
// of C++ type T and the output of type U.
template <typename T, typename U, typename Op>
Status run_broadcast_binary(const KernelContext& ctx, DType out_dtype, Op op) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  if (a.dtype() != b.dtype())
    return invalid_argument("input types differ: A is " + a.type().to_string() + ", B is " + b.type().to_string());
  HS_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a.shape(), b.shape()));
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{out_dtype, std::move(shape)}));
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  U* py = ctx.out(0).data<U>();
  for_each_broadcast_row(a.shape(), b.shape(), ctx.out(0).shape(),
                         [&](int64_t out, int64_t ao, int64_t as, int64_t bo, int64_t bs, int64_t n) {
                           for (int64_t j = 0; j < n; ++j) py[out + j] = op(pa[ao + j * as], pb[bo + j * bs]);
                         });
  return Status::ok();
}

// Mod (opset 10): fmod 1 is C's fmod (the dividend's sign), fmod 0 the
// integer remainder with the divisor's sign (Python's %); floats need fmod 1.
Status mod_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const int64_t fmod, ctx.attrs().get_int("fmod", 0));
  const DType d = ctx.in(0).dtype();
  if (d == DType::kFloat32) {
    if (fmod != 1) return invalid_argument("attribute 'fmod' must be 1 for f32 inputs, got " + std::to_string(fmod));
    return run_broadcast_binary<float, float>(ctx, d, [](float a, float b) { return std::fmod(a, b); });
  }
  Status status = invalid_argument("expects f32, i64 or i32 inputs, got " + ctx.in(0).type().to_string());
  visit_numeric(d, [&](auto t) {
    using T = decltype(t);
    if constexpr (!std::is_floating_point_v<T>) {
      status = run_broadcast_binary<T, T>(ctx, d, [fmod](T a, T b) -> T {
        if (b == 0) return 0;  // ONNX leaves it undefined; no trap
        T r = static_cast<T>(a % b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        return r;
      });
    }
  });
  return status;
}

template <typename Op>
KernelFn compare_kernel(Op op, bool allow_bool) {
  return [op, allow_bool](const KernelContext& ctx) -> Status {
    const DType d = ctx.in(0).dtype();
    if (allow_bool && d == DType::kBool)
      return run_broadcast_binary<uint8_t, uint8_t>(ctx, DType::kBool,
                                                    [op](uint8_t a, uint8_t b) -> uint8_t { return op(a, b); });
    Status status = invalid_argument("expects f32, i64 or i32 inputs, got " + ctx.in(0).type().to_string());
    visit_numeric(d, [&](auto t) {
      using T = decltype(t);
      status = run_broadcast_binary<T, uint8_t>(ctx, DType::kBool, [op](T a, T b) -> uint8_t { return op(a, b); });
    });
    return status;
  };
}

template <typename Op>
KernelFn logic_kernel(Op op) {
  return [op](const KernelContext& ctx) -> Status {
    if (ctx.in(0).dtype() != DType::kBool)
      return invalid_argument("expects bool inputs, got " + ctx.in(0).type().to_string());
    return run_broadcast_binary<uint8_t, uint8_t>(ctx, DType::kBool,
                                                  [op](uint8_t a, uint8_t b) -> uint8_t { return op(a != 0, b != 0); });
  };
}

Status not_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kBool) return invalid_argument("expects a bool input, got " + x.type().to_string());
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const uint8_t* px = x.data<uint8_t>();
  uint8_t* py = ctx.out(0).data<uint8_t>();
  for (int64_t i = 0; i < x.num_elements(); ++i) py[i] = px[i] ? 0 : 1;
  return Status::ok();
}

// --- math ------------------------------------------------------------------------------------

template <typename Op>
KernelFn unary_kernel(Op op) {
  return [op](const KernelContext& ctx) -> Status {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::kFloat32) return invalid_argument("input must be f32, got " + x.type().to_string());
    HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
    const float* px = x.data<float>();
    float* py = ctx.out(0).data<float>();
    parallel_chunks(x.num_elements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) py[i] = op(px[i]);
    });
    return Status::ok();
  };
}

Status leaky_relu_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const float alpha, ctx.attrs().get_float("alpha", 0.01f));
  return unary_kernel([alpha](float x) { return x < 0.f ? alpha * x : x; })(ctx);
}

Status prelu_kernel(const KernelContext& ctx) {
  if (ctx.in(0).dtype() != DType::kFloat32)
    return invalid_argument("input must be f32, got " + ctx.in(0).type().to_string());
  const Result<Shape> shape = broadcast_shapes(ctx.in(0).shape(), ctx.in(1).shape());
  if (!shape || *shape != ctx.in(0).shape())
    return invalid_argument("slope " + ctx.in(1).type().to_string() + " does not broadcast to X " +
                            ctx.in(0).type().to_string());
  return run_broadcast_binary<float, float>(ctx, DType::kFloat32,
                                            [](float x, float slope) { return x < 0.f ? x * slope : x; });
}

// Min, Max, Sum and Mean fold their inputs left to right, each element in
// the output's type; Mean divides the sum by the number of inputs.
template <typename T, typename Op>
Status run_variadic(const KernelContext& ctx, Op op, bool mean) {
  std::vector<Shape> shapes;
  Shape out_shape;
  for (size_t k = 0; k < ctx.inputs.size(); ++k) {
    if (!ctx.has_input(k)) return invalid_argument("input " + std::to_string(k) + " is missing");
    if (ctx.in(k).dtype() != ctx.in(0).dtype())
      return invalid_argument("input " + std::to_string(k) + " " + ctx.in(k).type().to_string() +
                              " differs in dtype from input 0");
    shapes.push_back(ctx.in(k).shape());
    HS_ASSIGN_OR_RETURN(out_shape, broadcast_shapes(out_shape, ctx.in(k).shape()));
  }
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{ctx.in(0).dtype(), out_shape}));
  std::vector<const T*> ptrs;
  for (size_t k = 0; k < ctx.inputs.size(); ++k) ptrs.push_back(ctx.in(k).data<T>());
  T* py = ctx.out(0).data<T>();
  const T count = static_cast<T>(ctx.inputs.size());
  for_each_broadcast_row_n(shapes, out_shape, [&](int64_t out, const int64_t* offs, const int64_t* steps, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
      T acc = ptrs[0][offs[0] + j * steps[0]];
      for (size_t k = 1; k < ptrs.size(); ++k) acc = op(acc, ptrs[k][offs[k] + j * steps[k]]);
      py[out + j] = mean ? acc / count : acc;
    }
  });
  return Status::ok();
}

template <typename Op>
KernelFn variadic_kernel(Op op, bool mean) {
  return [op, mean](const KernelContext& ctx) -> Status {
    if (ctx.inputs.empty() || !ctx.has_input(0)) return invalid_argument("needs at least one input");
    Status status = invalid_argument("expects f32, i64 or i32 inputs, got " + ctx.in(0).type().to_string());
    visit_numeric(ctx.in(0).dtype(), [&](auto t) {
      using T = decltype(t);
      status = run_variadic<T>(
          ctx, [op](T a, T b) { return static_cast<T>(op(a, b)); }, mean);
    });
    return status;
  };
}

// Inference-mode Dropout is the identity (dropout_passes_through), its
// mask all true.
Status dropout_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_RETURN_IF_ERROR(dropout_passes_through(ctx.has_input(1) ? &ctx.in(1) : nullptr, ctx.has_input(2),
                                            ctx.has_input(2) ? &ctx.in(2) : nullptr));
  if (ctx.outputs.empty() || !ctx.outputs[0]) return invalid_argument("needs output 0");
  if (ctx.out(0).type() != x.type())
    return invalid_argument("output 0 is " + ctx.out(0).type().to_string() + ", expected " + x.type().to_string());
  if (x.byte_size() != 0) std::memcpy(ctx.out(0).raw(), x.raw(), x.byte_size());
  if (ctx.outputs.size() > 1 && ctx.outputs[1]) {
    Tensor& mask = *ctx.outputs[1];
    if (mask.dtype() != DType::kBool || mask.shape() != x.shape())
      return invalid_argument("output 1 (mask) is " + mask.type().to_string() + ", expected bool of " +
                              x.type().to_string() + "'s shape");
    if (mask.byte_size() != 0) std::memset(mask.raw(), 1, mask.byte_size());
  }
  return Status::ok();
}

}  // namespace

void register_extra_kernels(KernelTable& table) {
  table["Cast"] = with_node_context(cast_kernel);
  table["Dropout"] = with_node_context(dropout_kernel);

  table["Equal"] = with_node_context(compare_kernel([](auto a, auto b) { return a == b; }, true));
  table["Less"] = with_node_context(compare_kernel([](auto a, auto b) { return a < b; }, false));
  table["Greater"] = with_node_context(compare_kernel([](auto a, auto b) { return a > b; }, false));
  table["LessOrEqual"] = with_node_context(compare_kernel([](auto a, auto b) { return a <= b; }, false));
  table["GreaterOrEqual"] = with_node_context(compare_kernel([](auto a, auto b) { return a >= b; }, false));
  table["And"] = with_node_context(logic_kernel([](bool a, bool b) { return a && b; }));
  table["Or"] = with_node_context(logic_kernel([](bool a, bool b) { return a || b; }));
  table["Xor"] = with_node_context(logic_kernel([](bool a, bool b) { return a != b; }));
  table["Not"] = with_node_context(not_kernel);
  table["Mod"] = with_node_context(mod_kernel);

  table["Erf"] = with_node_context(unary_kernel([](float x) { return std::erf(x); }));
  table["Floor"] = with_node_context(unary_kernel([](float x) { return std::floor(x); }));
  table["Ceil"] = with_node_context(unary_kernel([](float x) { return std::ceil(x); }));
  // ONNX Round rounds halves to even, which nearbyint does in the default rounding mode.
  table["Round"] = with_node_context(unary_kernel([](float x) { return std::nearbyint(x); }));
  table["Log"] = with_node_context(unary_kernel([](float x) { return std::log(x); }));
  table["LeakyRelu"] = with_node_context(leaky_relu_kernel);
  table["PRelu"] = with_node_context(prelu_kernel);

  table["Min"] = with_node_context(variadic_kernel([](auto a, auto b) { return b < a ? b : a; }, false));
  table["Max"] = with_node_context(variadic_kernel([](auto a, auto b) { return b > a ? b : a; }, false));
  table["Sum"] = with_node_context(variadic_kernel([](auto a, auto b) { return a + b; }, false));
  table["Mean"] = with_node_context(variadic_kernel([](auto a, auto b) { return a + b; }, true));

  register_extra_tensor_kernels(table);
  register_extra_reduce_kernels(table);
  register_extra_conv_transpose_kernels(table);
}

}  // namespace hetsched::cpu
