// Shape inference for the normalization ops that transformer and vision
// models export: LayerNormalization (opset 17), GroupNormalization (opset
// 18, revised at 21: scale and bias per channel instead of per group) and
// MeanVarianceNormalization (opset 9).
#include "graph/ops_norm.h"

#include <algorithm>
#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace hetsched {

namespace {

// True when `p` broadcasts one way (right-aligned) to `target`.
bool broadcasts_to(const Shape& p, const Shape& target) {
  if (p.size() > target.size()) return false;
  for (size_t i = 0; i < p.size(); ++i) {
    const int64_t d = p[p.size() - 1 - i];
    if (d != 1 && d != target[target.size() - 1 - i]) return false;
  }
  return true;
}

Status layer_norm_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input X"));
  HS_RETURN_IF_ERROR(require_f32(ctx.input_type(1), "input Scale"));
  if (ctx.has_input(2)) {
    HS_RETURN_IF_ERROR(require_f32(ctx.input_type(2), "input B"));
  }
  HS_RETURN_IF_ERROR(check_stash_type(ctx.attrs()));
  HS_ASSIGN_OR_RETURN(const LayerNormParams p,
                      layer_norm_params(ctx.attrs(), x.shape, ctx.input_type(1).shape,
                                        ctx.has_input(2) ? &ctx.input_type(2).shape : nullptr));
  outputs[0] = x;
  // Mean and InvStdDev, when asked for, in the stash type (f32).
  for (size_t i = 1; i < outputs.size(); ++i)
    outputs[i] = TensorType{DType::kFloat32, layer_norm_stat_shape(x.shape, p.axis)};
  return Status::ok();
}

Status group_norm_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input X"));
  HS_RETURN_IF_ERROR(require_f32(ctx.input_type(1), "input scale"));
  HS_RETURN_IF_ERROR(require_f32(ctx.input_type(2), "input bias"));
  HS_RETURN_IF_ERROR(check_stash_type(ctx.attrs()));
  HS_ASSIGN_OR_RETURN(const GroupNormParams p, group_norm_params(ctx.attrs(), ctx.opset(), x.shape,
                                                                 ctx.input_type(1).shape, ctx.input_type(2).shape));
  (void)p;
  outputs[0] = x;
  return Status::ok();
}

Status mvn_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_f32(x, "input X"));
  HS_RETURN_IF_ERROR(mvn_axes(ctx.attrs(), static_cast<int64_t>(x.rank())).status());
  outputs[0] = x;
  return Status::ok();
}

void add_schema(OpSchemaTable& table, std::string name, int min_inputs, int max_inputs, int max_outputs,
                InferFn infer) {
  OpSchema schema;
  schema.name = name;
  schema.min_inputs = min_inputs;
  schema.max_inputs = max_inputs;
  schema.max_outputs = max_outputs;
  schema.infer = with_node_context(std::move(infer));
  table[std::move(name)] = std::move(schema);
}

}  // namespace

Result<LayerNormParams> layer_norm_params(const Attributes& attrs, const Shape& x, const Shape& scale,
                                          const Shape* bias) {
  LayerNormParams p;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) return invalid_argument("input X must be at least 1-D, got a scalar");
  HS_ASSIGN_OR_RETURN(const int64_t axis, attrs.get_int("axis", -1));
  auto normalized = normalize_axis(axis, rank);
  if (!normalized) return invalid_argument("attribute 'axis': " + normalized.status().message());
  p.axis = *normalized;
  HS_ASSIGN_OR_RETURN(p.epsilon, attrs.get_float("epsilon", 1e-5f));
  if (!(p.epsilon >= 0.f)) return invalid_argument("attribute 'epsilon' must be >= 0, got " + std::to_string(p.epsilon));
  const Shape normalized_dims(x.begin() + p.axis, x.end());
  if (!broadcasts_to(scale, normalized_dims))
    return invalid_argument("Scale " + shape_to_string(scale) + " does not broadcast to the normalised dims " +
                            shape_to_string(normalized_dims) + " of X " + shape_to_string(x));
  if (bias && !broadcasts_to(*bias, normalized_dims))
    return invalid_argument("B " + shape_to_string(*bias) + " does not broadcast to the normalised dims " +
                            shape_to_string(normalized_dims) + " of X " + shape_to_string(x));
  for (int64_t d = 0; d < rank; ++d) (d < p.axis ? p.outer : p.inner) *= x[static_cast<size_t>(d)];
  return p;
}

Shape layer_norm_stat_shape(const Shape& x, int64_t axis) {
  Shape s = x;
  for (size_t d = static_cast<size_t>(axis); d < s.size(); ++d) s[d] = 1;
  return s;
}

Result<GroupNormParams> group_norm_params(const Attributes& attrs, int opset, const Shape& x, const Shape& scale,
                                          const Shape& bias) {
  GroupNormParams p;
  if (x.size() < 2) return invalid_argument("input X must be at least 2-D (N, C, ...), got " + shape_to_string(x));
  HS_ASSIGN_OR_RETURN(p.groups, attrs.require_int("num_groups"));
  HS_ASSIGN_OR_RETURN(p.epsilon, attrs.get_float("epsilon", 1e-5f));
  if (!(p.epsilon >= 0.f)) return invalid_argument("attribute 'epsilon' must be >= 0, got " + std::to_string(p.epsilon));
  const int64_t channels = x[1];
  if (p.groups < 1 || channels % p.groups != 0)
    return invalid_argument("attribute 'num_groups' = " + std::to_string(p.groups) + " must be >= 1 and divide the " +
                            std::to_string(channels) + " channels of X " + shape_to_string(x));
  // Opset 18 took scale and bias per group; 21 per channel (18 is deprecated).
  p.per_channel = opset >= 21;
  const int64_t want = p.per_channel ? channels : p.groups;
  const std::string per = p.per_channel ? "per channel (opset 21)" : "per group (opset 18)";
  if (scale != Shape{want} || bias != Shape{want})
    return invalid_argument("scale " + shape_to_string(scale) + " and bias " + shape_to_string(bias) + " must be [" +
                            std::to_string(want) + "], one value " + per + ", at graph opset " +
                            std::to_string(opset));
  return p;
}

Status check_stash_type(const Attributes& attrs) {
  HS_ASSIGN_OR_RETURN(const int64_t stash, attrs.get_int("stash_type", 1));
  if (stash != 1)
    return unsupported("attribute 'stash_type' = " + std::to_string(stash) +
                       " is not supported (accepted: 1, float statistics)");
  return Status::ok();
}

Result<std::vector<int64_t>> mvn_axes(const Attributes& attrs, int64_t rank) {
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> given, attrs.get_ints("axes", {0, 2, 3}));
  std::vector<int64_t> axes;
  for (const int64_t a : given) {
    auto normalized = normalize_axis(a, rank);
    if (!normalized)
      return invalid_argument("attribute 'axes' (default [0, 2, 3]): " + normalized.status().message() +
                              " of an input of rank " + std::to_string(rank));
    axes.push_back(*normalized);
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

void register_norm_ops(OpSchemaTable& table) {
  // Outputs Y and the optional Mean and InvStdDev.
  add_schema(table, "LayerNormalization", 2, 3, 3, layer_norm_infer);
  add_schema(table, "GroupNormalization", 3, 3, 1, group_norm_infer);
  add_schema(table, "MeanVarianceNormalization", 1, 1, 1, mvn_infer);
}

}  // namespace hetsched
