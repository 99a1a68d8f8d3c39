// Shape inference for single-purpose ops that classic and exported models
// use: Size, IsNaN, IsInf, DepthToSpace, SpaceToDepth, CumSum and
// InstanceNormalization.
#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace hetsched {

namespace {

Status size_infer(const InferContext&, std::vector<TensorType>& outputs) {
  outputs[0] = TensorType{DType::kInt64, {}};
  return Status::ok();
}

Status is_special_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(require_f32(ctx.input_type(0), "input"));
  outputs[0] = TensorType{DType::kBool, ctx.input_type(0).shape};
  return Status::ok();
}

// DepthToSpace moves blocksize² channels into a blocksize × blocksize patch;
// SpaceToDepth the other way. NCHW, rank 4.
Status depth_space_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input"));
  if (x.rank() != 4) return invalid_argument("input must be 4-D (N, C, H, W), got " + x.to_string());
  HS_ASSIGN_OR_RETURN(const int64_t b, ctx.attrs().require_int("blocksize"));
  if (b < 1) return invalid_argument("attribute 'blocksize' must be >= 1, got " + std::to_string(b));
  const bool to_space = ctx.node().op == "DepthToSpace";
  if (to_space) {
    HS_ASSIGN_OR_RETURN(const std::string mode, ctx.attrs().get_string("mode", "DCR"));
    if (mode != "DCR" && mode != "CRD")
      return invalid_argument("attribute 'mode' must be DCR or CRD, got '" + mode + "'");
    if (x.shape[1] % (b * b) != 0)
      return invalid_argument("channels " + std::to_string(x.shape[1]) + " are not a multiple of blocksize² " +
                              std::to_string(b * b));
    outputs[0] = TensorType{x.dtype, {x.shape[0], x.shape[1] / (b * b), x.shape[2] * b, x.shape[3] * b}};
  } else {
    if (x.shape[2] % b != 0 || x.shape[3] % b != 0)
      return invalid_argument("height and width of " + x.to_string() + " are not multiples of blocksize " +
                              std::to_string(b));
    outputs[0] = TensorType{x.dtype, {x.shape[0], x.shape[1] * b * b, x.shape[2] / b, x.shape[3] / b}};
  }
  return Status::ok();
}

Status cumsum_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kInt64 && x.dtype != DType::kInt32)
    return invalid_argument("input x must be f32, i64 or i32, got " + x.to_string());
  const TensorType& axis = ctx.input_type(1);
  if ((axis.dtype != DType::kInt64 && axis.dtype != DType::kInt32) || axis.num_elements() != 1)
    return invalid_argument("input 1 (axis) must be one i64 or i32, got " + axis.to_string());
  if (const Tensor* a = ctx.input_constant(1)) {
    HS_RETURN_IF_ERROR(normalize_axis(a->int_at(0), static_cast<int64_t>(x.rank())).status());
  }
  outputs[0] = x;
  return Status::ok();
}

Status instance_norm_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input"));
  if (x.rank() < 3) return invalid_argument("input must be at least 3-D (N, C, D1, ...), got " + x.to_string());
  for (size_t i = 1; i < 3; ++i) {
    const TensorType& p = ctx.input_type(i);
    if (p.dtype != DType::kFloat32 || p.shape != Shape{x.shape[1]})
      return invalid_argument(std::string(i == 1 ? "input scale" : "input B") + " must be f32[" +
                              std::to_string(x.shape[1]) + "], got " + p.to_string());
  }
  HS_RETURN_IF_ERROR(ctx.attrs().get_float("epsilon", 1e-5f).status());
  outputs[0] = x;
  return Status::ok();
}

void add(OpSchemaTable& table, const char* op, int min_inputs, int max_inputs, InferFn infer) {
  OpSchema schema;
  schema.name = op;
  schema.min_inputs = min_inputs;
  schema.max_inputs = max_inputs;
  schema.infer = with_node_context(std::move(infer));
  table[op] = std::move(schema);
}

}  // namespace

void register_misc_ops(OpSchemaTable& table) {
  add(table, "Size", 1, 1, size_infer);
  add(table, "IsNaN", 1, 1, is_special_infer);
  add(table, "IsInf", 1, 1, is_special_infer);
  add(table, "DepthToSpace", 1, 1, depth_space_infer);
  add(table, "SpaceToDepth", 1, 1, depth_space_infer);
  add(table, "CumSum", 2, 2, cumsum_infer);
  add(table, "InstanceNormalization", 3, 3, instance_norm_infer);
}

}  // namespace hetsched
