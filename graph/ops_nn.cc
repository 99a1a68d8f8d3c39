// Shape inference for the neural-network ops: Conv, BatchNormalization,
// MatMul, Gemm, the pools, Softmax and ReduceMean.
#include <algorithm>
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/ops_extra.h"
#include "graph/ops_nn.h"

namespace hetsched {

namespace {

void add_schema(OpSchemaTable& table, std::string name, int min_inputs, int max_inputs, int min_outputs,
                int max_outputs, InferFn infer) {
  OpSchema schema;
  schema.name = name;
  schema.min_inputs = min_inputs;
  schema.max_inputs = max_inputs;
  schema.min_outputs = min_outputs;
  schema.max_outputs = max_outputs;
  schema.is_compute = true;
  schema.infer = with_node_context(std::move(infer));
  table[std::move(name)] = std::move(schema);
}

// "[1,-2]": unlike shape_to_string, negative values print as numbers.
std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

Result<bool> read_flag(const Attributes& attrs, const std::string& name, int64_t fallback) {
  HS_ASSIGN_OR_RETURN(int64_t v, attrs.get_int(name, fallback));
  if (v != 0 && v != 1) return invalid_argument("attribute '" + name + "' must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

// An ints attribute with exactly `count` values, each >= `min_value`.
Result<std::vector<int64_t>> read_window_ints(const Attributes& attrs, const std::string& name, size_t count,
                                              int64_t fallback, int64_t min_value) {
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.get_ints(name, std::vector<int64_t>(count, fallback)));
  if (v.size() != count)
    return invalid_argument("attribute '" + name + "' has " + std::to_string(v.size()) + " values, expected " +
                            std::to_string(count));
  for (int64_t x : v)
    if (x < min_value)
      return invalid_argument("attribute '" + name + "' must have values >= " + std::to_string(min_value) + ", got " +
                              ints_to_string(v));
  return v;
}

// The sliding-window attributes shared by Conv and the pools.
struct Window {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // ONNX order: all begins, then all ends
  std::string auto_pad;
  bool ceil_mode = false;
};

Result<Window> read_window(const Attributes& attrs, std::vector<int64_t> kernel, bool allow_ceil_mode) {
  const size_t n = kernel.size();
  Window w;
  w.kernel = std::move(kernel);
  HS_ASSIGN_OR_RETURN(w.strides, read_window_ints(attrs, "strides", n, 1, 1));
  HS_ASSIGN_OR_RETURN(w.dilations, read_window_ints(attrs, "dilations", n, 1, 1));
  HS_ASSIGN_OR_RETURN(w.pads, read_window_ints(attrs, "pads", 2 * n, 0, 0));
  HS_ASSIGN_OR_RETURN(w.auto_pad, attrs.get_string("auto_pad", "NOTSET"));
  if (w.auto_pad != "NOTSET" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER" && w.auto_pad != "VALID")
    return invalid_argument("attribute 'auto_pad' is '" + w.auto_pad +
                            "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  if (w.auto_pad != "NOTSET" && std::any_of(w.pads.begin(), w.pads.end(), [](int64_t p) { return p != 0; }))
    return invalid_argument("attribute 'pads' " + ints_to_string(w.pads) + " cannot be combined with auto_pad " +
                            w.auto_pad);
  if (allow_ceil_mode) {
    HS_ASSIGN_OR_RETURN(w.ceil_mode, read_flag(attrs, "ceil_mode", 0));
  }
  return w;
}

// Output spatial dims of a sliding window over `in` (spatial dims only).
// SAME_* pads so that out = ceil(in / stride). Otherwise out = (in + pads -
// dilated kernel) / stride + 1, rounded down, or up under ceil_mode — where a
// last window that would start inside the end padding is dropped, as
// PyTorch and ONNX Runtime do, so that every window sees some input.
Result<Shape> window_output(const Shape& in, const Window& w) {
  Shape out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    // Kernel, dilation, stride and pads come from the model file unbounded:
    // the arithmetic is checked (graph_file_fuzz overflowed `in + pads`).
    const auto overflow = [&] {
      return invalid_argument("window arithmetic on spatial dim " + std::to_string(i) + " (input " +
                              std::to_string(in[i]) + ", kernel " + std::to_string(w.kernel[i]) + ", dilation " +
                              std::to_string(w.dilations[i]) + ", stride " + std::to_string(w.strides[i]) +
                              ") overflows 64 bits");
    };
    int64_t dk = 0;
    if (__builtin_mul_overflow(w.kernel[i] - 1, w.dilations[i], &dk) || __builtin_add_overflow(dk, 1, &dk))
      return overflow();
    const int64_t s = w.strides[i];
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
      int64_t padded = 0;
      if (__builtin_add_overflow(in[i], s - 1, &padded)) return overflow();
      out[i] = padded / s;
      continue;
    }
    const bool valid = w.auto_pad == "VALID";
    const int64_t pb = valid ? 0 : w.pads[i];
    const int64_t pe = valid ? 0 : w.pads[i + in.size()];
    int64_t span = 0;
    if (__builtin_add_overflow(in[i], pb, &span) || __builtin_add_overflow(span, pe, &span) ||
        __builtin_sub_overflow(span, dk, &span) || __builtin_add_overflow(span, s, &span))
      return overflow();
    span -= s;  // span + s fits: the ceil_mode rounding below cannot overflow
    if (span < 0)
      return invalid_argument("window of size " + std::to_string(dk) + " (kernel " + std::to_string(w.kernel[i]) +
                              ", dilation " + std::to_string(w.dilations[i]) + ") is larger than spatial dim " +
                              std::to_string(i) + " of the input (" + std::to_string(in[i]) + " + pads " +
                              std::to_string(pb) + "+" + std::to_string(pe) + ")");
    out[i] = (w.ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (w.ceil_mode && (out[i] - 1) * s >= in[i] + pb) --out[i];
  }
  return out;
}

// Checks X is f32 (N, C, spatial...); returns the number of spatial dims
// (any: the portable kernels run 3-D and more, the other engines say what
// they take).
Result<size_t> read_spatial_input(const InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input X"));
  if (x.rank() < 3) return invalid_argument("input X must be at least 3-D (N, C, spatial...), got " + x.to_string());
  return x.rank() - 2;
}

}  // namespace

Result<Shape> conv_output_shape(const Attributes& attrs, const Shape& x, const TensorType& weight) {
  const Shape& w = weight.shape;
  const size_t nsp = x.size() - 2;
  if (w.size() != x.size())
    return invalid_argument("weight must be " + std::to_string(x.size()) + "-D for " + std::to_string(nsp) +
                            "-D conv, got " + weight.to_string());
  HS_ASSIGN_OR_RETURN(const int64_t group, attrs.get_int("group", 1));
  if (group < 1) return invalid_argument("attribute 'group' must be >= 1, got " + std::to_string(group));
  const int64_t channels = x[1];
  const int64_t out_channels = w[0];
  if (channels != w[1] * group)
    return invalid_argument("input has " + std::to_string(channels) + " channels, but weight " + weight.to_string() +
                            " with group " + std::to_string(group) + " expects " + std::to_string(w[1] * group));
  if (out_channels % group != 0)
    return invalid_argument("weight has " + std::to_string(out_channels) +
                            " output channels, which is not divisible by group " + std::to_string(group));
  const std::vector<int64_t> weight_kernel(w.begin() + 2, w.end());
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, attrs.get_ints("kernel_shape", weight_kernel));
  if (kernel != weight_kernel)
    return invalid_argument("attribute 'kernel_shape' " + ints_to_string(kernel) +
                            " does not match the weight's spatial dims " + ints_to_string(weight_kernel));
  HS_ASSIGN_OR_RETURN(const Window window, read_window(attrs, std::move(kernel), false));
  HS_ASSIGN_OR_RETURN(Shape spatial, window_output(Shape(x.begin() + 2, x.end()), window));
  Shape out{x[0], out_channels};
  out.insert(out.end(), spatial.begin(), spatial.end());
  return out;
}

namespace {

Status conv_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(read_spatial_input(ctx).status());
  const TensorType& w = ctx.input_type(1);
  HS_RETURN_IF_ERROR(require_f32(w, "weight W"));
  HS_ASSIGN_OR_RETURN(Shape out, conv_output_shape(ctx.attrs(), ctx.input_type(0).shape, w));
  if (ctx.has_input(2)) {
    const TensorType& b = ctx.input_type(2);
    if (b.dtype != DType::kFloat32 || b.shape != Shape{out[1]})
      return invalid_argument("bias B must be f32[" + std::to_string(out[1]) + "], got " + b.to_string());
  }
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
}

Status pool_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const bool is_max = ctx.node().op == "MaxPool";
  HS_ASSIGN_OR_RETURN(const size_t nsp, read_spatial_input(ctx));
  const TensorType& x = ctx.input_type(0);
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, ctx.attrs().require_ints("kernel_shape"));
  if (kernel.size() != nsp)
    return invalid_argument("attribute 'kernel_shape' has " + std::to_string(kernel.size()) + " values, expected " +
                            std::to_string(nsp));
  for (int64_t k : kernel)
    if (k < 1) return invalid_argument("attribute 'kernel_shape' must have values >= 1, got " + ints_to_string(kernel));
  if (is_max) {
    // Only the Indices output reads it: row-major (0) or column-major (1)
    // positions within each image's channel.
    HS_ASSIGN_OR_RETURN(int64_t storage_order, ctx.attrs().get_int("storage_order", 0));
    if (storage_order != 0 && storage_order != 1)
      return invalid_argument("attribute 'storage_order' must be 0 or 1, got " + std::to_string(storage_order));
  } else {
    HS_ASSIGN_OR_RETURN(bool count_include_pad, read_flag(ctx.attrs(), "count_include_pad", 0));
    (void)count_include_pad;
  }
  HS_ASSIGN_OR_RETURN(const Window window, read_window(ctx.attrs(), std::move(kernel), true));
  // A window lying wholly in padding would have no input to reduce.
  for (size_t i = 0; i < 2 * nsp; ++i) {
    const size_t axis = i % nsp;
    const int64_t dk = (window.kernel[axis] - 1) * window.dilations[axis] + 1;
    if (window.pads[i] >= dk)
      return invalid_argument("attribute 'pads' " + ints_to_string(window.pads) +
                              " must be smaller than the window size " + std::to_string(dk) + " on spatial axis " +
                              std::to_string(axis));
  }
  HS_ASSIGN_OR_RETURN(Shape spatial, window_output(Shape(x.shape.begin() + 2, x.shape.end()), window));
  Shape out{x.shape[0], x.shape[1]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  // MaxPool's optional Indices: flat positions in X of each maximum.
  if (outputs.size() > 1) outputs[1] = TensorType{DType::kInt64, out};
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
}

// MaxUnpool (opset 9, 11): X's values written at the flat positions I
// holds (MaxPool's Indices) of an output of `output_shape` (a constant
// input) or, without it, of (in - 1) x stride - pads + kernel per
// spatial dim; zeros elsewhere.
Status max_unpool_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input X"));
  if (x.rank() < 3) return invalid_argument("input X must be at least 3-D (N, C, spatial...), got " + x.to_string());
  const TensorType& i = ctx.input_type(1);
  if (i.dtype != DType::kInt64 || i.shape != x.shape)
    return invalid_argument("input I must be i64 of X's shape " + x.to_string() + ", got " + i.to_string());
  if (ctx.has_input(2)) {
    const Tensor* shape = ctx.input_constant(2);
    if (!shape) return unsupported("input output_shape must be a constant (it decides the output shape)");
    if (shape->dtype() != DType::kInt64 || shape->num_elements() != static_cast<int64_t>(x.rank()))
      return invalid_argument("input output_shape must be " + std::to_string(x.rank()) + " i64 values, got " +
                              shape->type().to_string());
    Shape out = shape->to_int64_vector();
    if (out[0] != x.shape[0] || out[1] != x.shape[1] ||
        std::any_of(out.begin(), out.end(), [](int64_t d) { return d < 0; }))
      return invalid_argument("output_shape " + shape_to_string(out) + " must keep X's N and C, " + x.to_string());
    outputs[0] = TensorType{DType::kFloat32, std::move(out)};
    return Status::ok();
  }
  const size_t nsp = x.rank() - 2;
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, ctx.attrs().require_ints("kernel_shape"));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, ctx.attrs().get_ints("strides", std::vector<int64_t>(nsp, 1)));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, ctx.attrs().get_ints("pads", std::vector<int64_t>(2 * nsp, 0)));
  if (kernel.size() != nsp || strides.size() != nsp || pads.size() != 2 * nsp)
    return invalid_argument("attributes kernel_shape, strides and pads must have " + std::to_string(nsp) + ", " +
                            std::to_string(nsp) + " and " + std::to_string(2 * nsp) + " values");
  Shape out{x.shape[0], x.shape[1]};
  for (size_t d = 0; d < nsp; ++d) {
    const int64_t len = (x.shape[2 + d] - 1) * strides[d] - pads[d] - pads[nsp + d] + kernel[d];
    if (len < 1) return invalid_argument("spatial dim " + std::to_string(d) + " unpools to " + std::to_string(len));
    out.push_back(len);
  }
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
}

Status global_average_pool_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input X"));
  if (x.rank() < 3) return invalid_argument("input X must be at least 3-D (N, C, spatial...), got " + x.to_string());
  Shape out(x.rank(), 1);
  out[0] = x.shape[0];
  out[1] = x.shape[1];
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
}

Status batch_norm_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_ASSIGN_OR_RETURN(const int64_t training_mode, ctx.attrs().get_int("training_mode", 0));
  if (outputs.size() > 1 || training_mode != 0)
    return unsupported("training mode is unsupported: only inference with the single output Y is supported (got " +
                       std::to_string(outputs.size()) + " outputs, training_mode " + std::to_string(training_mode) +
                       ")");
  // Opset 7-8's `spatial` 0 keeps statistics per element, not per channel.
  HS_ASSIGN_OR_RETURN(const int64_t spatial, ctx.attrs().get_int("spatial", 1));
  if (spatial != 1)
    return unsupported("attribute 'spatial' = " + std::to_string(spatial) +
                       " (statistics per element, opsets 7-8) is not supported; spatial 1 (per channel) is");
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input X"));
  if (x.rank() < 2) return invalid_argument("input X must be at least 2-D (N, C, ...), got " + x.to_string());
  const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const TensorType& p = ctx.input_type(i);
    if (p.dtype != DType::kFloat32 || p.shape != Shape{x.shape[1]})
      return invalid_argument("input " + std::string(kNames[i]) + " must be f32[" + std::to_string(x.shape[1]) +
                              "] (one value per channel), got " + p.to_string());
  }
  HS_ASSIGN_OR_RETURN(const float epsilon, ctx.attrs().get_float("epsilon", 1e-5f));
  if (!(epsilon >= 0.f)) return invalid_argument("attribute 'epsilon' must be >= 0, got " + std::to_string(epsilon));
  outputs[0] = x;
  return Status::ok();
}

}  // namespace

// numpy.matmul: 1-D operands are promoted to matrices and the added dim is
// dropped again; leading (batch) dims broadcast.
Result<Shape> matmul_output_shape(const TensorType& a, const TensorType& b) {
  if (a.rank() == 0 || b.rank() == 0)
    return invalid_argument("inputs must be at least 1-D, got A " + a.to_string() + " and B " + b.to_string());
  const int64_t k_a = a.shape.back();
  const int64_t k_b = b.rank() == 1 ? b.shape[0] : b.shape[b.rank() - 2];
  if (k_a != k_b)
    return invalid_argument("inner dimensions differ: A " + a.to_string() + " has K=" + std::to_string(k_a) + ", B " +
                            b.to_string() + " has K=" + std::to_string(k_b));
  const Shape batch_a(a.shape.begin(), a.shape.end() - std::min<size_t>(a.rank(), 2));
  const Shape batch_b(b.shape.begin(), b.shape.end() - std::min<size_t>(b.rank(), 2));
  auto batch = broadcast_shapes(batch_a, batch_b);
  if (!batch) return invalid_argument("batch dims do not broadcast: " + batch.status().message());
  Shape out = std::move(batch).value();
  if (a.rank() >= 2) out.push_back(a.shape[a.rank() - 2]);
  if (b.rank() >= 2) out.push_back(b.shape.back());
  return out;
}

namespace {

Status matmul_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(1);
  HS_RETURN_IF_ERROR(require_f32(a, "input A"));
  HS_RETURN_IF_ERROR(require_f32(b, "input B"));
  HS_ASSIGN_OR_RETURN(Shape out, matmul_output_shape(a, b));
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
}

Status gemm_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(1);
  HS_RETURN_IF_ERROR(require_f32(a, "input A"));
  HS_RETURN_IF_ERROR(require_f32(b, "input B"));
  if (a.rank() != 2 || b.rank() != 2)
    return invalid_argument("inputs must be 2-D, got A " + a.to_string() + " and B " + b.to_string());
  HS_ASSIGN_OR_RETURN(const bool trans_a, read_flag(ctx.attrs(), "transA", 0));
  HS_ASSIGN_OR_RETURN(const bool trans_b, read_flag(ctx.attrs(), "transB", 0));
  HS_ASSIGN_OR_RETURN(const float alpha, ctx.attrs().get_float("alpha", 1.f));
  HS_ASSIGN_OR_RETURN(const float beta, ctx.attrs().get_float("beta", 1.f));
  (void)alpha;
  (void)beta;
  const int64_t m = trans_a ? a.shape[1] : a.shape[0];
  const int64_t k_a = trans_a ? a.shape[0] : a.shape[1];
  const int64_t k_b = trans_b ? b.shape[1] : b.shape[0];
  const int64_t n = trans_b ? b.shape[0] : b.shape[1];
  if (k_a != k_b)
    return invalid_argument("inner dimensions differ: A " + a.to_string() + (trans_a ? " (transposed)" : "") +
                            " has K=" + std::to_string(k_a) + ", B " + b.to_string() +
                            (trans_b ? " (transposed)" : "") + " has K=" + std::to_string(k_b));
  if (ctx.has_input(2)) {
    const TensorType& c = ctx.input_type(2);
    HS_RETURN_IF_ERROR(require_f32(c, "input C"));
    const Shape mn{m, n};
    bool ok = c.rank() <= 2;
    for (size_t i = 0; ok && i < c.rank(); ++i) {
      const int64_t target = mn[2 - c.rank() + i];
      ok = c.shape[i] == 1 || c.shape[i] == target;
    }
    if (!ok)
      return invalid_argument("input C " + c.to_string() + " does not broadcast to the output " + shape_to_string(mn));
  }
  outputs[0] = TensorType{DType::kFloat32, {m, n}};
  return Status::ok();
}

// Before opset 13 Softmax flattens the input to 2-D at `axis` (default 1)
// and normalises each row; from 13 it normalises along `axis` (default -1).
Status softmax_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input"));
  if (x.rank() == 0) return invalid_argument("input must be at least 1-D, got " + x.to_string());
  HS_ASSIGN_OR_RETURN(const int64_t axis, ctx.attrs().get_int("axis", ctx.opset() >= 13 ? -1 : 1));
  auto normalized = normalize_axis(axis, static_cast<int64_t>(x.rank()));
  if (!normalized) return invalid_argument("attribute 'axis': " + normalized.status().message());
  outputs[0] = x;
  return Status::ok();
}

// Axes as attribute or (opset 18) input: reduce_params (ops_extra.h) reads
// the form of the graph's opset, as for the other reductions.
Status reduce_mean_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input"));
  if (ctx.has_input(1) && !ctx.input_constant(1))
    return unsupported("input 1 (axes) must be a constant (it decides the output shape)");
  HS_ASSIGN_OR_RETURN(const ReduceParams p, reduce_params(ctx.node().op, ctx.attrs(), ctx.opset(), x.shape,
                                                          ctx.has_input(1), ctx.input_constant(1)));
  outputs[0] = TensorType{DType::kFloat32, p.noop ? x.shape : reduced_shape(x.shape, p)};
  return Status::ok();
}

}  // namespace

void register_nn_ops(OpSchemaTable& table) {
  add_schema(table, "Conv", 2, 3, 1, 1, conv_infer);
  add_schema(table, "BatchNormalization", 5, 5, 1, 5, batch_norm_infer);
  add_schema(table, "MatMul", 2, 2, 1, 1, matmul_infer);
  add_schema(table, "Gemm", 2, 3, 1, 1, gemm_infer);
  add_schema(table, "MaxPool", 1, 1, 1, 2, pool_infer);
  add_schema(table, "AveragePool", 1, 1, 1, 1, pool_infer);
  add_schema(table, "MaxUnpool", 2, 3, 1, 1, max_unpool_infer);
  add_schema(table, "GlobalAveragePool", 1, 1, 1, 1, global_average_pool_infer);
  add_schema(table, "GlobalMaxPool", 1, 1, 1, 1, global_average_pool_infer);
  add_schema(table, "Softmax", 1, 1, 1, 1, softmax_infer);
  add_schema(table, "LogSoftmax", 1, 1, 1, 1, softmax_infer);
  add_schema(table, "ReduceMean", 1, 2, 1, 1, reduce_mean_infer);
}

}  // namespace hetsched
