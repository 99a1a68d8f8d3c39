// Shape inference for single-purpose ops that classic and exported models
// use: Size, IsNaN, IsInf, DepthToSpace, SpaceToDepth, CumSum,
// InstanceNormalization, TopK, GatherND, ScatterND, ScatterElements, LRN,
// Hardmax, CastLike, OneHot, EyeLike, Einsum, GridSample, ReverseSequence
// and RoiAlign.
#include <algorithm>
#include <string>
#include <vector>

#include "graph/einsum.h"
#include "graph/grid_sample.h"
#include "graph/roi_align.h"
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

// TopK: K (input 1 from opset 10, attribute k before) must be a constant: it
// decides the output shape. Values keep X's type; indices are i64.
Status topk_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() == 0) return invalid_argument("input X must be at least 1-D, got " + x.to_string());
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kInt64 && x.dtype != DType::kInt32)
    return invalid_argument("input X must be f32, i64 or i32, got " + x.to_string());
  int64_t k = 0;
  if (ctx.opset() >= 10) {
    const Tensor* kt = ctx.input_constant(1);
    if (!kt) return unsupported("input 1 (K) must be a constant (it decides the output shape)");
    if (kt->dtype() != DType::kInt64 || kt->num_elements() != 1)
      return invalid_argument("input 1 (K) must be one i64, got " + kt->type().to_string());
    k = kt->int_at(0);
  } else {
    HS_ASSIGN_OR_RETURN(k, ctx.attrs().require_int("k"));
  }
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, ctx.attrs().get_int("axis", -1));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(x.rank())));
  if (k < 0 || k > x.shape[static_cast<size_t>(axis)])
    return invalid_argument("K = " + std::to_string(k) + " is outside [0, " +
                            std::to_string(x.shape[static_cast<size_t>(axis)]) + "] for axis " + std::to_string(axis));
  Shape shape = x.shape;
  shape[static_cast<size_t>(axis)] = k;
  outputs[0] = TensorType{x.dtype, shape};
  if (outputs.size() > 1) outputs[1] = TensorType{DType::kInt64, shape};
  return Status::ok();
}

// GatherND: out shape = indices.shape[:-1] + data.shape[batch_dims + last:].
Status gather_nd_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& idx = ctx.input_type(1);
  if (idx.dtype != DType::kInt64) return invalid_argument("input indices must be i64, got " + idx.to_string());
  HS_ASSIGN_OR_RETURN(const int64_t b, ctx.attrs().get_int("batch_dims", 0));
  if (idx.rank() < 1 || b < 0 || static_cast<size_t>(b) >= std::min(data.rank(), idx.rank()))
    return invalid_argument("batch_dims " + std::to_string(b) + " must be below the ranks of data " +
                            data.to_string() + " and indices " + idx.to_string());
  const int64_t last = idx.shape.back();
  if (last < 1 || static_cast<size_t>(b + last) > data.rank())
    return invalid_argument("indices' last dim " + std::to_string(last) + " does not fit data " + data.to_string() +
                            " after " + std::to_string(b) + " batch dims");
  for (int64_t d = 0; d < b; ++d)
    if (data.shape[static_cast<size_t>(d)] != idx.shape[static_cast<size_t>(d)])
      return invalid_argument("batch dims of data " + data.to_string() + " and indices " + idx.to_string() + " differ");
  Shape out(idx.shape.begin(), idx.shape.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + last, data.shape.end());
  outputs[0] = TensorType{data.dtype, out};
  return Status::ok();
}

// ScatterND and ScatterElements: the output is data with updates written in;
// reduction none (all opsets) or add, mul (16) and max, min (18). Scatter
// (opsets 9, 10; deprecated at 11) is ScatterElements under its old name.
Status scatter_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& idx = ctx.input_type(1);
  const TensorType& upd = ctx.input_type(2);
  if (idx.dtype != DType::kInt64 && idx.dtype != DType::kInt32)
    return invalid_argument("input indices must be i64 or i32, got " + idx.to_string());
  if (upd.dtype != data.dtype)
    return invalid_argument("updates " + upd.to_string() + " must have data's type " + data.to_string());
  HS_ASSIGN_OR_RETURN(const std::string reduction, ctx.attrs().get_string("reduction", "none"));
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min")
    return invalid_argument("attribute 'reduction' must be none, add, mul, max or min, got '" + reduction + "'");
  if (ctx.node().op == "ScatterElements" || ctx.node().op == "Scatter") {
    if (idx.shape != upd.shape)
      return invalid_argument("indices " + idx.to_string() + " and updates " + upd.to_string() + " must have one shape");
    if (idx.rank() != data.rank())
      return invalid_argument("indices " + idx.to_string() + " must have data's rank " + data.to_string());
    HS_ASSIGN_OR_RETURN(const int64_t axis, ctx.attrs().get_int("axis", 0));
    HS_RETURN_IF_ERROR(normalize_axis(axis, static_cast<int64_t>(data.rank())).status());
  } else {
    if (idx.rank() < 1 || static_cast<size_t>(idx.shape.back()) > data.rank())
      return invalid_argument("indices " + idx.to_string() + " do not fit data " + data.to_string());
    Shape want(idx.shape.begin(), idx.shape.end() - 1);
    want.insert(want.end(), data.shape.begin() + idx.shape.back(), data.shape.end());
    if (upd.shape != want)
      return invalid_argument("updates must be " + shape_to_string(want) + ", got " + upd.to_string());
  }
  outputs[0] = data;
  return Status::ok();
}

// LRN across channels (AlexNet, GoogLeNet): size must be positive.
Status lrn_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input X"));
  if (x.rank() < 3) return invalid_argument("input X must be at least 3-D (N, C, D1, ...), got " + x.to_string());
  HS_ASSIGN_OR_RETURN(const int64_t size, ctx.attrs().require_int("size"));
  if (size < 1) return invalid_argument("attribute 'size' must be >= 1, got " + std::to_string(size));
  outputs[0] = x;
  return Status::ok();
}

// Hardmax: 1 at the first maximum along `axis` (the opset's form, as
// Softmax), 0 elsewhere.
Status hardmax_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input"));
  if (x.rank() == 0) return invalid_argument("input must be at least 1-D, got " + x.to_string());
  HS_ASSIGN_OR_RETURN(const int64_t axis, ctx.attrs().get_int("axis", ctx.opset() >= 13 ? -1 : 1));
  HS_RETURN_IF_ERROR(normalize_axis(axis, static_cast<int64_t>(x.rank())).status());
  outputs[0] = x;
  return Status::ok();
}

// CastLike (opset 15): Cast to the second input's type.
Status cast_like_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const DType from = ctx.input_type(0).dtype, to = ctx.input_type(1).dtype;
  const bool numeric = [](DType d) {
    return d == DType::kFloat32 || d == DType::kInt64 || d == DType::kInt32 || d == DType::kBool;
  }(from);
  const bool target = to == DType::kFloat32 || to == DType::kInt64 || to == DType::kInt32 || to == DType::kBool;
  if (!numeric || !target)
    return unsupported("casts between f32, i64, i32 and bool only, got " + ctx.input_type(0).to_string() + " like " +
                       ctx.input_type(1).to_string());
  outputs[0] = TensorType{to, ctx.input_type(0).shape};
  return Status::ok();
}

// OneHot (opset 9/11): depth (input 1) must be a constant: it is the new
// axis's length. Values (input 2) are [off, on]; the output has their type.
Status one_hot_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& indices = ctx.input_type(0);
  const Tensor* depth = ctx.input_constant(1);
  if (!depth) return unsupported("input 1 (depth) must be a constant (it decides the output shape)");
  if (depth->num_elements() != 1) return invalid_argument("input 1 (depth) must hold one value, got " +
                                                          depth->type().to_string());
  const int64_t d = depth->dtype() == DType::kFloat32 ? static_cast<int64_t>(depth->data<float>()[0]) : depth->int_at(0);
  if (d < 1) return invalid_argument("depth must be >= 1, got " + std::to_string(d));
  const TensorType& values = ctx.input_type(2);
  if (values.num_elements() != 2) return invalid_argument("input 2 (values) must be [off, on], got " + values.to_string());
  if (indices.dtype != DType::kInt64 && indices.dtype != DType::kInt32 && indices.dtype != DType::kFloat32)
    return invalid_argument("input 0 (indices) must be i64, i32 or f32, got " + indices.to_string());
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, ctx.attrs().get_int("axis", -1));
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(indices.rank()) + 1));
  Shape out = indices.shape;
  out.insert(out.begin() + axis, d);
  outputs[0] = TensorType{values.dtype, out};
  return Status::ok();
}

// EyeLike: ones on diagonal k of a 2-D tensor of the input's shape.
Status eye_like_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() != 2) return invalid_argument("input must be 2-D, got " + x.to_string());
  DType dtype = x.dtype;
  if (ctx.attrs().has("dtype")) {
    HS_ASSIGN_OR_RETURN(const int64_t onnx_type, ctx.attrs().get_int("dtype", 1));
    const std::optional<DType> d = dtype_from_onnx(static_cast<int>(onnx_type));
    if (!d || (*d != DType::kFloat32 && *d != DType::kInt64 && *d != DType::kInt32))
      return unsupported("attribute 'dtype' = " + std::to_string(onnx_type) + " is not supported (f32, i64, i32 are)");
    dtype = *d;
  }
  if (dtype != DType::kFloat32 && dtype != DType::kInt64 && dtype != DType::kInt32)
    return unsupported("EyeLike of " + x.to_string() + " is not supported (f32, i64, i32 are)");
  outputs[0] = TensorType{dtype, x.shape};
  return Status::ok();
}

Status grid_sample_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(require_f32(ctx.input_type(0), "input X"));
  HS_RETURN_IF_ERROR(require_f32(ctx.input_type(1), "input grid"));
  HS_RETURN_IF_ERROR(grid_sample_params(ctx.attrs(), ctx.opset()).status());
  HS_ASSIGN_OR_RETURN(Shape out, grid_sample_output_shape(ctx.input_type(0).shape, ctx.input_type(1).shape));
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
}

Status roi_align_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_ASSIGN_OR_RETURN(const RoiAlignParams p, roi_align_params(ctx.attrs(), ctx.opset()));
  HS_ASSIGN_OR_RETURN(Shape out,
                      roi_align_output_shape(p, ctx.input_type(0), ctx.input_type(1), ctx.input_type(2)));
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
}

// ReverseSequence: input [time, batch, ...] (or [batch, time, ...]), one
// length per batch entry.
Status reverse_sequence_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 2) return invalid_argument("input must be at least 2-D, got " + x.to_string());
  HS_ASSIGN_OR_RETURN(const int64_t time_axis, ctx.attrs().get_int("time_axis", 0));
  HS_ASSIGN_OR_RETURN(const int64_t batch_axis, ctx.attrs().get_int("batch_axis", 1));
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0)))
    return invalid_argument("attributes time_axis = " + std::to_string(time_axis) + ", batch_axis = " +
                            std::to_string(batch_axis) + " are not accepted (0 and 1, or 1 and 0)");
  const TensorType& lens = ctx.input_type(1);
  if (lens.dtype != DType::kInt64 || lens.shape != Shape{x.shape[static_cast<size_t>(batch_axis)]})
    return invalid_argument("input sequence_lens must be i64[" +
                            std::to_string(x.shape[static_cast<size_t>(batch_axis)]) + "] (one per batch entry), got " +
                            lens.to_string());
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

// Einsum of f32 operands (graph/einsum.h reads the equation); the clean-up
// lowers the common ones to MatMul (passes/lower_einsum.h).
Status einsum_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return invalid_argument("input " + std::to_string(i) + " is omitted");
    HS_RETURN_IF_ERROR(require_f32(ctx.input_type(i), "input " + std::to_string(i)));
    shapes.push_back(ctx.input_type(i).shape);
  }
  HS_ASSIGN_OR_RETURN(const std::string equation, ctx.attrs().get_string("equation", ""));
  HS_ASSIGN_OR_RETURN(const EinsumSpec spec, parse_einsum(equation, shapes));
  Shape out;
  for (int id : spec.output) out.push_back(spec.sizes[static_cast<size_t>(id)]);
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
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
  add(table, "TopK", 1, 2, topk_infer);
  table["TopK"].max_outputs = 2;
  add(table, "GatherND", 2, 2, gather_nd_infer);
  add(table, "ScatterND", 3, 3, scatter_infer);
  add(table, "ScatterElements", 3, 3, scatter_infer);
  add(table, "Scatter", 3, 3, scatter_infer);
  add(table, "LRN", 1, 1, lrn_infer);
  add(table, "Hardmax", 1, 1, hardmax_infer);
  add(table, "CastLike", 2, 2, cast_like_infer);
  add(table, "OneHot", 3, 3, one_hot_infer);
  add(table, "EyeLike", 1, 1, eye_like_infer);
  add(table, "Einsum", 1, 16, einsum_infer);
  add(table, "GridSample", 2, 2, grid_sample_infer);
  add(table, "ReverseSequence", 2, 2, reverse_sequence_infer);
  add(table, "RoiAlign", 3, 3, roi_align_infer);
}

}  // namespace hetsched
