// Shape inference for the quantization ops: QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear (the QDQ format's ops) and
// QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger (the QOperator
// format's). Quantized tensors are u8 or i8 (i32 for DequantizeLinear's
// input and the *Integer ops' outputs); scales are f32 (f16 scales are
// widened at import, passes/compute_f16_in_f32.h).
#include "graph/ops_quant.h"

#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/ops_nn.h"

namespace hetsched {

namespace {

// ONNX's names for the quantized element types hetsched has no dtype for:
// QuantizeLinear/DequantizeLinear take them from opset 19 (fp8) and 21
// (int16, uint16, int4, uint4).
std::string onnx_quant_type_name(int64_t t) {
  switch (t) {
    case 4: return "UINT16";
    case 5: return "INT16";
    case 17: return "FLOAT8E4M3FN";
    case 18: return "FLOAT8E4M3FNUZ";
    case 19: return "FLOAT8E5M2";
    case 20: return "FLOAT8E5M2FNUZ";
    case 21: return "UINT4";
    case 22: return "INT4";
    case 23: return "FLOAT4E2M1";
    default: return "type " + std::to_string(t);
  }
}

// A scale or zero point that is one value for the whole tensor.
bool is_single(const TensorType& t) { return t.rank() <= 1 && t.num_elements() == 1; }

Status require_quant8(const TensorType& t, const std::string& what) {
  if (!is_quant8(t.dtype)) return invalid_argument(what + " must be u8 or i8, got " + t.to_string());
  return Status::ok();
}

// A per-tensor scale: f32, one value.
Status require_scalar_scale(const InferContext& ctx, size_t i, const std::string& what) {
  const TensorType& t = ctx.input_type(i);
  if (t.dtype != DType::kFloat32 || !is_single(t))
    return invalid_argument(what + " must be one f32 (a per-tensor scale), got " + t.to_string());
  return Status::ok();
}

// A zero point of `data`'s dtype: one value, or (`per_channel` > 0) that
// many values along one axis. Omitted zero points are 0.
Status require_zero_point(const InferContext& ctx, size_t i, const std::string& what, const TensorType& data,
                          const std::string& data_name, int64_t per_channel = 0) {
  if (!ctx.has_input(i)) return Status::ok();
  const TensorType& t = ctx.input_type(i);
  if (t.dtype != data.dtype)
    return invalid_argument(what + " " + t.to_string() + " must have " + data_name + "'s dtype " +
                            std::string(dtype_name(data.dtype)));
  if (is_single(t)) return Status::ok();
  if (per_channel > 0 && t.shape == Shape{per_channel}) return Status::ok();
  return invalid_argument(what + " must be one value" +
                          (per_channel > 0 ? " or " + std::to_string(per_channel) + " values (one per channel)"
                                           : std::string(" (per-tensor)")) +
                          ", got " + t.to_string());
}

Status quantize_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype != DType::kFloat32) return invalid_argument("input x must be f32, got " + x.to_string());
  const TensorType* zp = ctx.has_input(2) ? &ctx.input_type(2) : nullptr;
  HS_RETURN_IF_ERROR(quant_axis(ctx.attrs(), ctx.opset(), x.shape, ctx.input_type(1), zp).status());
  HS_ASSIGN_OR_RETURN(const DType out, quantize_output_dtype(ctx.attrs(), zp));
  outputs[0] = TensorType{out, x.shape};
  return Status::ok();
}

Status dequantize_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (!is_quant8(x.dtype) && x.dtype != DType::kInt32)
    return invalid_argument("input x must be u8, i8 or i32, got " + x.to_string());
  const TensorType* zp = ctx.has_input(2) ? &ctx.input_type(2) : nullptr;
  if (zp && zp->dtype != x.dtype)
    return invalid_argument("x_zero_point " + zp->to_string() + " must have x's dtype " +
                            std::string(dtype_name(x.dtype)));
  if (zp && x.dtype == DType::kInt32)
    if (const Tensor* z = ctx.input_constant(2))
      for (int64_t v : z->to_int64_vector())
        if (v != 0) return invalid_argument("x_zero_point of an i32 x must be 0 (the ONNX rule), got " + std::to_string(v));
  HS_RETURN_IF_ERROR(quant_axis(ctx.attrs(), ctx.opset(), x.shape, ctx.input_type(1), zp).status());
  outputs[0] = TensorType{DType::kFloat32, x.shape};
  return Status::ok();
}

Status dynamic_quantize_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype != DType::kFloat32) return invalid_argument("input x must be f32, got " + x.to_string());
  outputs[0] = TensorType{DType::kUInt8, x.shape};
  if (outputs.size() > 1) outputs[1] = TensorType{DType::kFloat32, {}};
  if (outputs.size() > 2) outputs[2] = TensorType{DType::kUInt8, {}};
  return Status::ok();
}

// Conv's input rank check (N, C, spatial...), 1-D and 2-D as Conv.
Status require_conv_input(const TensorType& x) {
  if (x.rank() < 3) return invalid_argument("input x must be at least 3-D (N, C, spatial...), got " + x.to_string());
  if (x.rank() > 4)
    return unsupported("only 1-D and 2-D conv is supported, got " + std::to_string(x.rank() - 2) + "-D input " +
                       x.to_string());
  return Status::ok();
}

// QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
// y_zero_point, B): w_scale and w_zero_point may be per output channel; B
// is i32, one per output channel; y's dtype is y_zero_point's.
Status qlinear_conv_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& w = ctx.input_type(3);
  HS_RETURN_IF_ERROR(require_quant8(x, "input x"));
  HS_RETURN_IF_ERROR(require_quant8(w, "input w"));
  HS_RETURN_IF_ERROR(require_conv_input(x));
  HS_ASSIGN_OR_RETURN(Shape out, conv_output_shape(ctx.attrs(), x.shape, w));
  const int64_t m = out[1];
  HS_RETURN_IF_ERROR(require_scalar_scale(ctx, 1, "x_scale"));
  HS_RETURN_IF_ERROR(require_zero_point(ctx, 2, "x_zero_point", x, "x"));
  const TensorType& w_scale = ctx.input_type(4);
  if (w_scale.dtype != DType::kFloat32 || !(is_single(w_scale) || w_scale.shape == Shape{m}))
    return invalid_argument("w_scale must be one f32 or " + std::to_string(m) +
                            " (one per output channel), got " + w_scale.to_string());
  HS_RETURN_IF_ERROR(require_zero_point(ctx, 5, "w_zero_point", w, "w", m));
  HS_RETURN_IF_ERROR(require_scalar_scale(ctx, 6, "y_scale"));
  if (!ctx.has_input(7)) return invalid_argument("input y_zero_point is required (it gives y's dtype, u8 or i8)");
  const TensorType& y_zp = ctx.input_type(7);
  HS_RETURN_IF_ERROR(require_quant8(y_zp, "y_zero_point"));
  if (!is_single(y_zp)) return invalid_argument("y_zero_point must be one value, got " + y_zp.to_string());
  if (ctx.has_input(8)) {
    const TensorType& b = ctx.input_type(8);
    if (b.dtype != DType::kInt32 || b.shape != Shape{m})
      return invalid_argument("bias B must be i32[" + std::to_string(m) + "], got " + b.to_string());
  }
  outputs[0] = TensorType{y_zp.dtype, std::move(out)};
  return Status::ok();
}

// ConvInteger(x, w, x_zero_point, w_zero_point) -> i32; w_zero_point may be
// per output channel.
Status conv_integer_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& w = ctx.input_type(1);
  HS_RETURN_IF_ERROR(require_quant8(x, "input x"));
  HS_RETURN_IF_ERROR(require_quant8(w, "input w"));
  HS_RETURN_IF_ERROR(require_conv_input(x));
  HS_ASSIGN_OR_RETURN(Shape out, conv_output_shape(ctx.attrs(), x.shape, w));
  HS_RETURN_IF_ERROR(require_zero_point(ctx, 2, "x_zero_point", x, "x"));
  HS_RETURN_IF_ERROR(require_zero_point(ctx, 3, "w_zero_point", w, "w", out[1]));
  outputs[0] = TensorType{DType::kInt32, std::move(out)};
  return Status::ok();
}

// A's rows (M) and B's columns (N) of a matmul, 1 for a 1-D operand's
// missing dim: per-row and per-column zero points and scales have that many.
int64_t matmul_rows(const TensorType& a) { return a.rank() >= 2 ? a.shape[a.rank() - 2] : 1; }
int64_t matmul_cols(const TensorType& b) { return b.rank() >= 2 ? b.shape.back() : 1; }

// A scale that is one f32 or `count` of them (per row of A, per column of B).
Status require_row_scale(const InferContext& ctx, size_t i, const std::string& what, int64_t count,
                         const std::string& per) {
  const TensorType& t = ctx.input_type(i);
  if (t.dtype != DType::kFloat32 || !(is_single(t) || t.shape == Shape{count}))
    return invalid_argument(what + " must be one f32 or " + std::to_string(count) + " (one per " + per + "), got " +
                            t.to_string());
  return Status::ok();
}

// QLinearMatMul(a, a_scale, a_zero_point, b, b_scale, b_zero_point,
// y_scale, y_zero_point): numpy matmul of the dequantized operands,
// requantized to y_zero_point's dtype.
Status qlinear_matmul_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(3);
  HS_RETURN_IF_ERROR(require_quant8(a, "input a"));
  HS_RETURN_IF_ERROR(require_quant8(b, "input b"));
  HS_ASSIGN_OR_RETURN(Shape out, matmul_output_shape(a, b));
  HS_RETURN_IF_ERROR(require_row_scale(ctx, 1, "a_scale", matmul_rows(a), "row of a"));
  HS_RETURN_IF_ERROR(require_zero_point(ctx, 2, "a_zero_point", a, "a", matmul_rows(a)));
  HS_RETURN_IF_ERROR(require_row_scale(ctx, 4, "b_scale", matmul_cols(b), "column of b"));
  HS_RETURN_IF_ERROR(require_zero_point(ctx, 5, "b_zero_point", b, "b", matmul_cols(b)));
  HS_RETURN_IF_ERROR(require_scalar_scale(ctx, 6, "y_scale"));
  if (!ctx.has_input(7)) return invalid_argument("input y_zero_point is required (it gives y's dtype, u8 or i8)");
  const TensorType& y_zp = ctx.input_type(7);
  HS_RETURN_IF_ERROR(require_quant8(y_zp, "y_zero_point"));
  if (!is_single(y_zp)) return invalid_argument("y_zero_point must be one value, got " + y_zp.to_string());
  outputs[0] = TensorType{y_zp.dtype, std::move(out)};
  return Status::ok();
}

// MatMulInteger(a, b, a_zero_point, b_zero_point) -> i32; zero points per
// tensor, per row of a or per column of b.
Status matmul_integer_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(1);
  HS_RETURN_IF_ERROR(require_quant8(a, "input A"));
  HS_RETURN_IF_ERROR(require_quant8(b, "input B"));
  HS_ASSIGN_OR_RETURN(Shape out, matmul_output_shape(a, b));
  HS_RETURN_IF_ERROR(require_zero_point(ctx, 2, "a_zero_point", a, "A", matmul_rows(a)));
  HS_RETURN_IF_ERROR(require_zero_point(ctx, 3, "b_zero_point", b, "B", matmul_cols(b)));
  outputs[0] = TensorType{DType::kInt32, std::move(out)};
  return Status::ok();
}

void add(OpSchemaTable& table, const char* op, int min_inputs, int max_inputs, int max_outputs, InferFn infer) {
  OpSchema schema;
  schema.name = op;
  schema.min_inputs = min_inputs;
  schema.max_inputs = max_inputs;
  schema.max_outputs = max_outputs;
  schema.infer = with_node_context(std::move(infer));
  table[op] = std::move(schema);
}

}  // namespace

Result<int64_t> quant_axis(const Attributes& attrs, int opset, const Shape& x, const TensorType& scale,
                           const TensorType* zero_point) {
  HS_ASSIGN_OR_RETURN(const int64_t block_size, attrs.get_int("block_size", 0));
  if (block_size != 0)
    return unsupported("blocked quantization (attribute 'block_size' = " + std::to_string(block_size) +
                       ") is not supported; accepted: block_size 0 (a per-tensor or per-axis scale)");
  if (scale.dtype != DType::kFloat32) return invalid_argument("scale must be f32, got " + scale.to_string());
  if (zero_point && zero_point->shape != scale.shape)
    return invalid_argument("zero point " + zero_point->to_string() + " must have the scale's shape " +
                            scale.to_string());
  if (is_single(scale)) return int64_t{-1};
  if (scale.rank() != 1)
    return invalid_argument("scale must be a scalar or 1-D (one value per slice along 'axis'), got " +
                            scale.to_string());
  if (opset < 13)
    return invalid_argument("a 1-D scale " + scale.to_string() + " (per-axis quantization) needs opset 13, the model has " +
                            std::to_string(opset) + "; accepted: a scalar scale");
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, attrs.get_int("axis", 1));
  Result<int64_t> axis = normalize_axis(attr_axis, static_cast<int64_t>(x.size()));
  if (!axis) return invalid_argument("attribute 'axis': " + axis.status().message());
  const int64_t dim = x[static_cast<size_t>(*axis)];
  if (scale.shape[0] != dim)
    return invalid_argument("scale " + scale.to_string() + " does not match axis " + std::to_string(attr_axis) +
                            " of x " + shape_to_string(x) + " (" + std::to_string(dim) +
                            " values); accepted: a scalar, or one value per index of that axis");
  return *axis;
}

Result<DType> quantize_output_dtype(const Attributes& attrs, const TensorType* zero_point) {
  HS_ASSIGN_OR_RETURN(const int64_t output_dtype, attrs.get_int("output_dtype", 0));
  std::optional<DType> from_attr;
  if (output_dtype != 0) {
    from_attr = dtype_from_onnx(static_cast<int>(output_dtype));
    if (!from_attr || !is_quant8(*from_attr))
      return unsupported("output_dtype " + (from_attr ? std::string(dtype_name(*from_attr))
                                                      : onnx_quant_type_name(output_dtype)) +
                         " is not supported; accepted: UINT8, INT8");
  }
  if (!zero_point) return from_attr.value_or(DType::kUInt8);
  if (!is_quant8(zero_point->dtype))
    return invalid_argument("y_zero_point must be u8 or i8 (it gives y's dtype), got " + zero_point->to_string());
  if (from_attr && *from_attr != zero_point->dtype)
    return invalid_argument("y_zero_point " + zero_point->to_string() + " differs from output_dtype " +
                            std::string(dtype_name(*from_attr)) + "; they must name one dtype");
  return zero_point->dtype;
}

void register_quant_ops(OpSchemaTable& table) {
  add(table, "QuantizeLinear", 2, 3, 1, quantize_infer);
  add(table, "DequantizeLinear", 2, 3, 1, dequantize_infer);
  add(table, "DynamicQuantizeLinear", 1, 1, 3, dynamic_quantize_infer);
  table["DynamicQuantizeLinear"].min_outputs = 3;
  add(table, "QLinearConv", 8, 9, 1, qlinear_conv_infer);
  add(table, "QLinearMatMul", 8, 8, 1, qlinear_matmul_infer);
  add(table, "ConvInteger", 2, 4, 1, conv_integer_infer);
  add(table, "MatMulInteger", 2, 4, 1, matmul_integer_infer);
}

}  // namespace hetsched
