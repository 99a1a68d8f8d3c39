// Shape inference for the elementwise ops: binary arithmetic with numpy
// broadcasting, and the unary math and activation functions.
#include <algorithm>
#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace hetsched {

namespace {

void add_schema(OpSchemaTable& table, std::string name, int min_inputs, int max_inputs, InferFn infer) {
  OpSchema schema;
  schema.name = name;
  schema.min_inputs = min_inputs;
  schema.max_inputs = max_inputs;
  schema.is_compute = true;
  schema.infer = with_node_context(std::move(infer));
  table[std::move(name)] = std::move(schema);
}

std::string dtype_list(const std::vector<DType>& dtypes) {
  std::string s;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (i) s += i + 1 == dtypes.size() ? " or " : ", ";
    s += dtype_name(dtypes[i]);
  }
  return s;
}

// Binary ops: both inputs of one dtype from `allowed`; the output has the
// broadcast shape.
InferFn binary_infer(std::vector<DType> allowed) {
  return [allowed = std::move(allowed)](const InferContext& ctx, std::vector<TensorType>& outputs) -> Status {
    const TensorType& a = ctx.input_type(0);
    const TensorType& b = ctx.input_type(1);
    if (a.dtype != b.dtype)
      return invalid_argument("input types differ: A is " + a.to_string() + ", B is " + b.to_string());
    bool ok = false;
    for (DType d : allowed) ok |= a.dtype == d;
    if (!ok) return invalid_argument("expects " + dtype_list(allowed) + " inputs, got " + a.to_string());
    HS_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a.shape, b.shape));
    outputs[0] = TensorType{a.dtype, std::move(shape)};
    return Status::ok();
  };
}

// Pow (opset 12 on): the exponent may have another numeric type than the
// base; the output has the base's.
Status pow_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(1);
  const std::vector<DType> numeric = {DType::kFloat32, DType::kInt64, DType::kInt32};
  for (const TensorType* t : {&a, &b})
    if (std::find(numeric.begin(), numeric.end(), t->dtype) == numeric.end())
      return invalid_argument("expects " + dtype_list(numeric) + " inputs, got " + t->to_string());
  if (a.dtype != b.dtype && ctx.opset() < 12)
    return invalid_argument("input types differ before opset 12: A is " + a.to_string() + ", B is " + b.to_string());
  HS_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a.shape, b.shape));
  outputs[0] = TensorType{a.dtype, std::move(shape)};
  return Status::ok();
}

// Neg and Abs: f32, i64 or i32 (shape arithmetic in exported models).
Status unary_numeric_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kInt64 && x.dtype != DType::kInt32)
    return invalid_argument("input must be f32, i64 or i32, got " + x.to_string());
  outputs[0] = x;
  return Status::ok();
}

Status unary_f32_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(require_f32(ctx.input_type(0), "input"));
  outputs[0] = ctx.input_type(0);
  return Status::ok();
}

Status hard_sigmoid_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_ASSIGN_OR_RETURN(float alpha, ctx.attrs().get_float("alpha", 0.2f));
  HS_ASSIGN_OR_RETURN(float beta, ctx.attrs().get_float("beta", 0.5f));
  (void)alpha;
  (void)beta;
  return unary_f32_infer(ctx, outputs);
}

// Gelu (opset 20): the exact form (erf) or, with approximate = "tanh", the
// tanh approximation.
Status gelu_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_ASSIGN_OR_RETURN(const std::string approximate, ctx.attrs().get_string("approximate", "none"));
  if (approximate != "none" && approximate != "tanh")
    return invalid_argument("attribute 'approximate' is '" + approximate + "', expected none or tanh");
  return unary_f32_infer(ctx, outputs);
}

// Clip changed form at opset 11: its bounds moved from attributes to
// optional inputs, which may be omitted or computed at run time.
Status clip_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(require_f32(ctx.input_type(0), "input"));
  if (ctx.opset() <= 10) {
    if (ctx.num_inputs() > 1)
      return invalid_argument("takes min and max as attributes before opset 11, got " +
                              std::to_string(ctx.num_inputs()) + " inputs (opset " + std::to_string(ctx.opset()) + ")");
    HS_ASSIGN_OR_RETURN(float lo, ctx.attrs().get_float("min", 0.f));
    HS_ASSIGN_OR_RETURN(float hi, ctx.attrs().get_float("max", 0.f));
    (void)lo;
    (void)hi;
  } else {
    for (const char* name : {"min", "max"})
      if (ctx.attrs().has(name))
        return invalid_argument("attribute '" + std::string(name) + "' is not allowed from opset 11 (opset " +
                                std::to_string(ctx.opset()) + "); pass it as an input");
    const char* kBoundNames[] = {"", "min", "max"};
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i)) continue;
      const TensorType& bound = ctx.input_type(i);
      if (bound.dtype != ctx.input_type(0).dtype)
        return invalid_argument(std::string(kBoundNames[i]) + " must have the input's type " +
                                std::string(dtype_name(ctx.input_type(0).dtype)) + ", got " + bound.to_string());
      if (bound.num_elements() != 1)
        return invalid_argument(std::string(kBoundNames[i]) + " must be a scalar, got " + bound.to_string());
    }
  }
  outputs[0] = ctx.input_type(0);
  return Status::ok();
}

}  // namespace

void register_elementwise_ops(OpSchemaTable& table) {
  const std::vector<DType> kArithmetic = {DType::kFloat32, DType::kInt64, DType::kInt32};
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) add_schema(table, op, 2, 2, binary_infer(kArithmetic));
  add_schema(table, "Pow", 2, 2, pow_infer);
  add_schema(table, "Mod", 2, 2, binary_infer({DType::kFloat32, DType::kInt64}));

  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Sin", "Cos", "Reciprocal", "Sqrt", "HardSwish"})
    add_schema(table, op, 1, 1, unary_f32_infer);
  for (const char* op : {"Neg", "Abs"}) add_schema(table, op, 1, 1, unary_numeric_infer);
  add_schema(table, "HardSigmoid", 1, 1, hard_sigmoid_infer);
  add_schema(table, "Gelu", 1, 1, gelu_infer);
  add_schema(table, "Clip", 1, 3, clip_infer);
}

}  // namespace hetsched
