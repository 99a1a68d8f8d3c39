// Shape inference for the ops beyond the core set that imported ONNX models
// use: type and shape plumbing (Cast, Shape, ConstantOfShape, Range, Expand,
// Tile, Split, Pad, Dropout), comparisons and logic (Equal, Less, Greater,
// Where, Not, And, Or), more math (Erf, Floor, Ceil, Round, Log, LeakyRelu,
// PRelu, Min, Max, Sum, Mean), reductions (ReduceSum/Max/Min/Prod,
// ArgMax/ArgMin) and ConvTranspose.
//
// As everywhere in the op set, outputs must come out static: an input that
// decides an output shape (Expand's shape, Tile's repeats, Range's bounds...)
// must be a constant. At import, constant folding turns the shape
// sub-graphs that compute such inputs into constants first.
#include "graph/ops_extra.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace hetsched {

namespace {

constexpr int kAnyCount = std::numeric_limits<int>::max();

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string dtype_list(const std::vector<DType>& dtypes) {
  std::string s;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (i) s += i + 1 == dtypes.size() ? " or " : ", ";
    s += dtype_name(dtypes[i]);
  }
  return s;
}

Status require_dtype(const TensorType& type, const std::vector<DType>& allowed, const std::string& what) {
  if (std::find(allowed.begin(), allowed.end(), type.dtype) == allowed.end())
    return invalid_argument(what + " must be " + dtype_list(allowed) + ", got " + type.to_string());
  return Status::ok();
}

Result<bool> read_flag(const Attributes& attrs, const std::string& name, int64_t fallback) {
  HS_ASSIGN_OR_RETURN(int64_t v, attrs.get_int(name, fallback));
  if (v != 0 && v != 1) return invalid_argument("attribute '" + name + "' must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

// The values of constant input i, which must be an integer tensor of rank <= 1.
Result<std::vector<int64_t>> constant_ints(const InferContext& ctx, size_t i, const std::string& what) {
  const Tensor* t = ctx.input_constant(i);
  if (!t) return unsupported(what + " must be a constant (it decides the output shape)");
  if (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)
    return invalid_argument(what + " must be i64 or i32, got " + t->type().to_string());
  if (t->type().rank() > 1) return invalid_argument(what + " must be 1-D, got " + t->type().to_string());
  return t->to_int64_vector();
}

void add_schema(OpSchemaTable& table, std::string name, int min_inputs, int max_inputs, int min_outputs,
                int max_outputs, bool is_compute, InferFn infer) {
  OpSchema schema;
  schema.name = name;
  schema.min_inputs = min_inputs;
  schema.max_inputs = max_inputs;
  schema.min_outputs = min_outputs;
  schema.max_outputs = max_outputs;
  schema.is_compute = is_compute;
  schema.infer = with_node_context(std::move(infer));
  table[std::move(name)] = std::move(schema);
}

const std::vector<DType> kCastTypes = {DType::kFloat32, DType::kInt64, DType::kInt32,
                                       DType::kBool,    DType::kUInt8, DType::kInt8};
const std::vector<DType> kNumeric = {DType::kFloat32, DType::kInt64, DType::kInt32};

// --- type and shape plumbing ---------------------------------------------------

Status cast_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_ASSIGN_OR_RETURN(const int64_t to, ctx.attrs().require_int("to"));
  const std::optional<DType> dtype = dtype_from_onnx(static_cast<int>(to));
  // Every dtype to every other; f16 and bf16 through f32 (the CPU kernel).
  const std::vector<DType> types = {DType::kFloat32, DType::kInt64, DType::kInt32,   DType::kBool,
                                    DType::kUInt8,   DType::kInt8,  DType::kFloat16, DType::kBFloat16};
  HS_RETURN_IF_ERROR(require_dtype(ctx.input_type(0), types, "input"));
  if (!dtype || std::find(types.begin(), types.end(), *dtype) == types.end())
    return unsupported("attribute 'to' = " + std::to_string(to) + " is not a supported target (accepted: " +
                       dtype_list(types) + ", ONNX types 1, 7, 6, 9, 2, 3, 10, 16)");
  outputs[0] = TensorType{*dtype, ctx.input_type(0).shape};
  return Status::ok();
}

Status shape_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, shape_op_dims(ctx.attrs(), ctx.input_type(0).shape));
  outputs[0] = TensorType{DType::kInt64, {static_cast<int64_t>(dims.size())}};
  return Status::ok();
}

Status constant_of_shape_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  if (ctx.input_type(0).dtype != DType::kInt64)
    return invalid_argument("input (shape) must be i64, got " + ctx.input_type(0).to_string());
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> shape, constant_ints(ctx, 0, "input (shape)"));
  for (int64_t d : shape)
    if (d < 0) return invalid_argument("shape " + ints_to_string(shape) + " has a negative dim");
  DType dtype = DType::kFloat32;
  if (const Attribute* a = ctx.attrs().find("value")) {
    const Tensor* value = std::get_if<Tensor>(a);
    if (!value)
      return invalid_argument("attribute 'value' must be a tensor, got " + std::string(attribute_kind_name(*a)));
    if (value->num_elements() != 1)
      return invalid_argument("attribute 'value' must hold one element, got " + value->type().to_string());
    HS_RETURN_IF_ERROR(require_dtype(value->type(), kCastTypes, "attribute 'value'"));
    dtype = value->dtype();
  }
  outputs[0] = TensorType{dtype, std::move(shape)};
  return Status::ok();
}

// Range's length is max(ceil((limit - start) / delta), 0), computed in
// double as the ONNX reference does.
Status range_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const char* kNames[] = {"start", "limit", "delta"};
  const DType dtype = ctx.input_type(0).dtype;
  HS_RETURN_IF_ERROR(require_dtype(ctx.input_type(0), kNumeric, "start"));
  double v[3];
  for (size_t i = 0; i < 3; ++i) {
    const TensorType& t = ctx.input_type(i);
    if (t.dtype != dtype || t.num_elements() != 1)
      return invalid_argument(std::string(kNames[i]) + " must be a " + std::string(dtype_name(dtype)) +
                              " scalar like start, got " + t.to_string());
    const Tensor* c = ctx.input_constant(i);
    if (!c) return unsupported(std::string(kNames[i]) + " must be a constant (it decides the output length)");
    v[i] = dtype == DType::kFloat32 ? static_cast<double>(c->data<float>()[0]) : static_cast<double>(c->int_at(0));
  }
  if (v[2] == 0.0) return invalid_argument("delta must not be 0");
  const double n = std::ceil((v[1] - v[0]) / v[2]);
  outputs[0] = TensorType{dtype, {n > 0 ? static_cast<int64_t>(n) : 0}};
  return Status::ok();
}

// Expand broadcasts both ways: the output has the broadcast of the input
// shape and the given one.
Status expand_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> shape, constant_ints(ctx, 1, "input 1 (shape)"));
  auto out = broadcast_shapes(ctx.input_type(0).shape, shape);
  if (!out)
    return invalid_argument("cannot expand " + ctx.input_type(0).to_string() + " to " + ints_to_string(shape) + ": " +
                            out.status().message());
  outputs[0] = TensorType{ctx.input_type(0).dtype, std::move(out).value()};
  return Status::ok();
}

Status tile_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, constant_ints(ctx, 1, "input 1 (repeats)"));
  if (repeats.size() != x.rank())
    return invalid_argument("repeats " + ints_to_string(repeats) + " must have one value per dim of " + x.to_string());
  Shape out = x.shape;
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] < 0) return invalid_argument("repeats " + ints_to_string(repeats) + " has a negative value");
    out[i] *= repeats[i];
  }
  outputs[0] = TensorType{x.dtype, std::move(out)};
  return Status::ok();
}

Status split_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_ASSIGN_OR_RETURN(const int64_t raw_axis, ctx.attrs().get_int("axis", 0));
  auto axis = normalize_axis(raw_axis, static_cast<int64_t>(x.rank()));
  if (!axis) return invalid_argument("attribute 'axis': " + axis.status().message());
  if (ctx.has_input(1) && !ctx.input_constant(1))
    return unsupported("input 1 (split) must be a constant (it decides the output shapes)");
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                      split_sizes(ctx.attrs(), ctx.opset(), ctx.input_constant(1), x.shape, *axis, outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i] = x;
    outputs[i].shape[static_cast<size_t>(*axis)] = sizes[i];
  }
  return Status::ok();
}

Status pad_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (ctx.opset() >= 11) {
    if (!ctx.has_input(1)) return invalid_argument("needs input 1 (pads) from opset 11 on");
    if (!ctx.input_constant(1)) return unsupported("input 1 (pads) must be a constant (it decides the output shape)");
    if (ctx.has_input(2)) {
      const TensorType& v = ctx.input_type(2);
      if (v.dtype != x.dtype || v.num_elements() != 1)
        return invalid_argument("input 2 (constant_value) must be a " + std::string(dtype_name(x.dtype)) +
                                " scalar like the data, got " + v.to_string());
    }
  }
  if (ctx.has_input(3) && !ctx.input_constant(3))
    return unsupported("input 3 (axes) must be a constant (it decides the output shape)");
  HS_ASSIGN_OR_RETURN(PadParams p,
                      pad_params(ctx.attrs(), ctx.opset(), x.shape, ctx.input_constant(1), nullptr, ctx.input_constant(3)));
  const size_t rank = x.rank();
  Shape out = x.shape;
  for (size_t i = 0; i < rank; ++i) {
    out[i] += p.pads[i] + p.pads[rank + i];
    if (out[i] < 0)
      return invalid_argument("pads " + ints_to_string(p.pads) + " crop dim " + std::to_string(i) + " of " +
                              x.to_string() + " below 0");
    if (p.mode == "wrap" && (p.pads[i] < 0 || p.pads[rank + i] < 0))
      return unsupported("negative pads " + ints_to_string(p.pads) + " (cropping) in wrap mode are not supported");
    if (p.mode == "reflect" && (p.pads[i] >= x.shape[i] || p.pads[rank + i] >= x.shape[i]))
      return invalid_argument("reflect pads " + ints_to_string(p.pads) + " must be smaller than dim " +
                              std::to_string(i) + " of " + x.to_string());
    if ((p.mode == "edge" || p.mode == "wrap") && x.shape[i] == 0 && out[i] > 0)
      return invalid_argument(p.mode + " mode cannot pad the empty dim " + std::to_string(i) + " of " + x.to_string());
  }
  outputs[0] = TensorType{x.dtype, std::move(out)};
  return Status::ok();
}

// Inference only: Dropout passes its input through (dropout_passes_through);
// its mask output, if asked for, is all true.
Status dropout_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(dropout_passes_through(ctx.input_constant(1), ctx.has_input(2), ctx.input_constant(2)));
  outputs[0] = ctx.input_type(0);
  if (outputs.size() > 1) outputs[1] = TensorType{DType::kBool, ctx.input_type(0).shape};
  return Status::ok();
}

// --- comparisons and logic -------------------------------------------------------

InferFn compare_infer(std::vector<DType> allowed) {
  return [allowed = std::move(allowed)](const InferContext& ctx, std::vector<TensorType>& outputs) -> Status {
    const TensorType& a = ctx.input_type(0);
    const TensorType& b = ctx.input_type(1);
    if (a.dtype != b.dtype)
      return invalid_argument("input types differ: A is " + a.to_string() + ", B is " + b.to_string());
    HS_RETURN_IF_ERROR(require_dtype(a, allowed, "inputs"));
    HS_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(a.shape, b.shape));
    outputs[0] = TensorType{DType::kBool, std::move(shape)};
    return Status::ok();
  };
}

Status not_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(require_dtype(ctx.input_type(0), {DType::kBool}, "input"));
  outputs[0] = ctx.input_type(0);
  return Status::ok();
}

// Trilu (opset 14): the upper or lower triangle of the last two dims, from
// diagonal k (input 1, an i64 scalar; 0 when absent).
Status trilu_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 2) return invalid_argument("input must be at least 2-D, got " + x.to_string());
  if (ctx.has_input(1)) {
    const TensorType& k = ctx.input_type(1);
    if (k.dtype != DType::kInt64 || k.num_elements() != 1)
      return invalid_argument("input 1 (k) must be one i64, got " + k.to_string());
  }
  HS_ASSIGN_OR_RETURN(const int64_t upper, ctx.attrs().get_int("upper", 1));
  if (upper != 0 && upper != 1) return invalid_argument("attribute 'upper' must be 0 or 1, got " + std::to_string(upper));
  outputs[0] = x;
  return Status::ok();
}

Status where_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(require_dtype(ctx.input_type(0), {DType::kBool}, "input 0 (condition)"));
  const TensorType& x = ctx.input_type(1);
  const TensorType& y = ctx.input_type(2);
  if (x.dtype != y.dtype)
    return invalid_argument("X " + x.to_string() + " and Y " + y.to_string() + " differ in dtype");
  HS_ASSIGN_OR_RETURN(Shape xy, broadcast_shapes(x.shape, y.shape));
  HS_ASSIGN_OR_RETURN(Shape out, broadcast_shapes(ctx.input_type(0).shape, xy));
  outputs[0] = TensorType{x.dtype, std::move(out)};
  return Status::ok();
}

// --- math ----------------------------------------------------------------------------

Status unary_f32_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_RETURN_IF_ERROR(require_dtype(ctx.input_type(0), {DType::kFloat32}, "input"));
  outputs[0] = ctx.input_type(0);
  return Status::ok();
}

Status leaky_relu_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  HS_ASSIGN_OR_RETURN(const float alpha, ctx.attrs().get_float("alpha", 0.01f));
  (void)alpha;
  return unary_f32_infer(ctx, outputs);
}

// PRelu's slope broadcasts to X one way only: the output has X's shape.
Status prelu_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& slope = ctx.input_type(1);
  HS_RETURN_IF_ERROR(require_dtype(x, {DType::kFloat32}, "input X"));
  HS_RETURN_IF_ERROR(require_dtype(slope, {DType::kFloat32}, "input slope"));
  auto shape = broadcast_shapes(x.shape, slope.shape);
  if (!shape || *shape != x.shape)
    return invalid_argument("slope " + slope.to_string() + " does not broadcast to X " + x.to_string());
  outputs[0] = x;
  return Status::ok();
}

// Min, Max, Sum, Mean: any number of inputs of one dtype, broadcast together.
InferFn variadic_infer(std::vector<DType> allowed) {
  return [allowed = std::move(allowed)](const InferContext& ctx, std::vector<TensorType>& outputs) -> Status {
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (!ctx.has_input(i)) return invalid_argument("input " + std::to_string(i) + " is missing");
    const TensorType& first = ctx.input_type(0);
    HS_RETURN_IF_ERROR(require_dtype(first, allowed, "inputs"));
    Shape shape = first.shape;
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      const TensorType& t = ctx.input_type(i);
      if (t.dtype != first.dtype)
        return invalid_argument("input " + std::to_string(i) + " " + t.to_string() + " differs in dtype from input 0 " +
                                first.to_string());
      HS_ASSIGN_OR_RETURN(shape, broadcast_shapes(shape, t.shape));
    }
    outputs[0] = TensorType{first.dtype, std::move(shape)};
    return Status::ok();
  };
}

// --- reductions ------------------------------------------------------------------------

Status reduce_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_dtype(x, {DType::kFloat32, DType::kInt64, DType::kInt32}, "input"));
  if (ctx.has_input(1) && !ctx.input_constant(1))
    return unsupported("input 1 (axes) must be a constant (it decides the output shape)");
  HS_ASSIGN_OR_RETURN(ReduceParams p, reduce_params(ctx.node().op, ctx.attrs(), ctx.opset(), x.shape, ctx.has_input(1),
                                                    ctx.input_constant(1)));
  for (size_t i = 0; i < x.rank(); ++i)
    if (p.reduced[i] && x.shape[i] == 0 && ctx.node().op != "ReduceSum" && ctx.node().op != "ReduceProd")
      return invalid_argument("cannot reduce the empty dim " + std::to_string(i) + " of " + x.to_string());
  outputs[0] = TensorType{x.dtype, reduced_shape(x.shape, p)};
  return Status::ok();
}

Status arg_reduce_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  HS_RETURN_IF_ERROR(require_dtype(x, {DType::kFloat32, DType::kInt64, DType::kInt32}, "input"));
  HS_ASSIGN_OR_RETURN(const int64_t raw_axis, ctx.attrs().get_int("axis", 0));
  auto axis = normalize_axis(raw_axis, static_cast<int64_t>(x.rank()));
  if (!axis) return invalid_argument("attribute 'axis': " + axis.status().message());
  HS_ASSIGN_OR_RETURN(const bool keepdims, read_flag(ctx.attrs(), "keepdims", 1));
  HS_ASSIGN_OR_RETURN(const bool last, read_flag(ctx.attrs(), "select_last_index", 0));
  (void)last;
  if (x.shape[static_cast<size_t>(*axis)] == 0)
    return invalid_argument("cannot take the arg of the empty axis " + std::to_string(*axis) + " of " + x.to_string());
  Shape out = x.shape;
  if (keepdims)
    out[static_cast<size_t>(*axis)] = 1;
  else
    out.erase(out.begin() + *axis);
  outputs[0] = TensorType{DType::kInt64, std::move(out)};
  return Status::ok();
}

// --- ConvTranspose ---------------------------------------------------------------------------

Status conv_transpose_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& w = ctx.input_type(1);
  HS_RETURN_IF_ERROR(require_dtype(x, {DType::kFloat32}, "input X"));
  HS_RETURN_IF_ERROR(require_dtype(w, {DType::kFloat32}, "weight W"));
  HS_ASSIGN_OR_RETURN(const ConvTransposeGeometry g, conv_transpose_geometry(ctx.attrs(), x.shape, w.shape));
  if (ctx.has_input(2)) {
    const TensorType& b = ctx.input_type(2);
    if (b.dtype != DType::kFloat32 || b.shape != Shape{g.out_channels})
      return invalid_argument("bias B must be f32[" + std::to_string(g.out_channels) + "], got " + b.to_string());
  }
  Shape out{x.shape[0], g.out_channels};
  out.insert(out.end(), g.out.begin(), g.out.end());
  outputs[0] = TensorType{DType::kFloat32, std::move(out)};
  return Status::ok();
}

// A per-axis ints attribute of `count` values, each >= min_value.
Result<std::vector<int64_t>> axis_ints(const Attributes& attrs, const std::string& name, size_t count, int64_t fallback,
                                       int64_t min_value) {
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

}  // namespace

// --- the shared parameter readers (ops_extra.h) ----------------------------------------------

Result<std::vector<int64_t>> shape_op_dims(const Attributes& attrs, const Shape& input) {
  const int64_t rank = static_cast<int64_t>(input.size());
  HS_ASSIGN_OR_RETURN(int64_t start, attrs.get_int("start", 0));
  HS_ASSIGN_OR_RETURN(int64_t end, attrs.get_int("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  if (end <= start) return std::vector<int64_t>{};
  return std::vector<int64_t>(input.begin() + start, input.begin() + end);
}

Result<std::vector<int64_t>> split_sizes(const Attributes& attrs, int opset, const Tensor* split_input,
                                         const Shape& input, int64_t axis, size_t num_outputs) {
  const int64_t dim = input[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes;
  if (opset >= 13) {
    if (attrs.has("split"))
      return invalid_argument("split is input 1 from opset 13 on, not an attribute (graph opset " +
                              std::to_string(opset) + ")");
    if (split_input) {
      if (split_input->dtype() != DType::kInt64 || split_input->type().rank() != 1)
        return invalid_argument("input 1 (split) must be a 1-D i64 tensor, got " + split_input->type().to_string());
      sizes = split_input->to_int64_vector();
    }
  } else {
    HS_ASSIGN_OR_RETURN(sizes, attrs.get_ints("split", {}));
  }
  if (attrs.has("num_outputs")) {
    if (opset < 18)
      return invalid_argument("attribute 'num_outputs' exists from opset 18 on (graph opset " + std::to_string(opset) +
                              ")");
    if (split_input) return invalid_argument("takes input 1 (split) or attribute 'num_outputs', not both");
    HS_ASSIGN_OR_RETURN(const int64_t n, attrs.get_int("num_outputs", 0));
    if (n != static_cast<int64_t>(num_outputs))
      return invalid_argument("attribute 'num_outputs' is " + std::to_string(n) + ", but the node has " +
                              std::to_string(num_outputs) + " outputs");
    // ONNX: chunks of ceil(dim / n), the last one smaller when n does not divide dim.
    const int64_t chunk = (dim + n - 1) / n;
    if (chunk * (n - 1) > dim)
      return invalid_argument("axis " + std::to_string(axis) + " of size " + std::to_string(dim) + " cannot split into " +
                              std::to_string(n) + " chunks of " + std::to_string(chunk) +
                              " (the last chunk would be empty or negative)");
    std::vector<int64_t> chunks(static_cast<size_t>(n), chunk);
    chunks.back() = dim - chunk * (n - 1);
    return chunks;
  }
  if (sizes.empty()) {
    if (dim % static_cast<int64_t>(num_outputs) != 0)
      return invalid_argument("axis " + std::to_string(axis) + " of size " + std::to_string(dim) +
                              " does not split evenly into " + std::to_string(num_outputs) + " outputs");
    return std::vector<int64_t>(num_outputs, dim / static_cast<int64_t>(num_outputs));
  }
  if (sizes.size() != num_outputs)
    return invalid_argument("split " + ints_to_string(sizes) + " has " + std::to_string(sizes.size()) + " sizes for " +
                            std::to_string(num_outputs) + " outputs");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return invalid_argument("split " + ints_to_string(sizes) + " has a negative size");
    total += s;
  }
  if (total != dim)
    return invalid_argument("split " + ints_to_string(sizes) + " adds up to " + std::to_string(total) + ", but axis " +
                            std::to_string(axis) + " has size " + std::to_string(dim));
  return sizes;
}

int64_t pad_source_index(int64_t i, int64_t in, const std::string& mode) {
  if (i >= 0 && i < in) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return i < 0 ? 0 : in - 1;
  // numpy's wrap: the dim repeats periodically, however far the pads reach.
  if (mode == "wrap") return ((i % in) + in) % in;
  // reflect without repeating the edge: -1 → 1, in → in - 2
  const int64_t period = 2 * (in - 1);
  i = period == 0 ? 0 : ((i % period) + period) % period;
  return i >= in ? period - i : i;
}

Result<PadParams> pad_params(const Attributes& attrs, int opset, const Shape& input, const Tensor* pads_input,
                             const Tensor* value_input, const Tensor* axes_input) {
  const size_t rank = input.size();
  PadParams p;
  HS_ASSIGN_OR_RETURN(p.mode, attrs.get_string("mode", "constant"));
  const bool known = p.mode == "constant" || p.mode == "reflect" || p.mode == "edge" || p.mode == "wrap";
  if (!known || (p.mode == "wrap" && opset < 19))
    return invalid_argument("attribute 'mode' is '" + p.mode + "', expected constant, reflect, edge" +
                            (opset >= 19 ? " or wrap" : " (wrap from opset 19)"));
  if (opset <= 10) {
    if (pads_input)
      return invalid_argument("takes pads as an attribute before opset 11 (graph opset " + std::to_string(opset) + ")");
    HS_ASSIGN_OR_RETURN(p.pads, attrs.require_ints("pads"));
    HS_ASSIGN_OR_RETURN(const float value, attrs.get_float("value", 0.f));
    p.value = value;
  } else {
    if (attrs.has("pads") || attrs.has("value"))
      return invalid_argument("pads and value are inputs from opset 11 on, not attributes (graph opset " +
                              std::to_string(opset) + ")");
    if (!pads_input) return invalid_argument("needs input 1 (pads) from opset 11 on");
    if (pads_input->dtype() != DType::kInt64 || pads_input->type().rank() != 1)
      return invalid_argument("input 1 (pads) must be a 1-D i64 tensor, got " + pads_input->type().to_string());
    p.pads = pads_input->to_int64_vector();
    if (value_input && value_input->num_elements() == 1)
      p.value = value_input->dtype() == DType::kFloat32 ? static_cast<double>(value_input->data<float>()[0])
                                                        : static_cast<double>(value_input->int_at(0));
  }
  if (axes_input) {
    if (opset < 18) return invalid_argument("input 3 (axes) exists from opset 18 on");
    if ((axes_input->dtype() != DType::kInt64 && axes_input->dtype() != DType::kInt32) ||
        axes_input->type().rank() != 1)
      return invalid_argument("input 3 (axes) must be a 1-D i64 or i32 tensor, got " + axes_input->type().to_string());
    const std::vector<int64_t> axes = axes_input->to_int64_vector();
    if (p.pads.size() != 2 * axes.size())
      return invalid_argument("pads " + ints_to_string(p.pads) + " must have 2 values per axis of " +
                              ints_to_string(axes) + " (" + std::to_string(2 * axes.size()) + ")");
    std::vector<int64_t> full(2 * rank, 0);
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      auto axis = normalize_axis(axes[i], static_cast<int64_t>(rank));
      if (!axis) return invalid_argument("input 3 (axes) " + ints_to_string(axes) + ": " + axis.status().message());
      const size_t a = static_cast<size_t>(*axis);
      if (seen[a]) return invalid_argument("input 3 (axes) " + ints_to_string(axes) + " names axis " +
                                           std::to_string(a) + " twice");
      seen[a] = true;
      full[a] = p.pads[i];
      full[rank + a] = p.pads[axes.size() + i];
    }
    p.pads = std::move(full);
  }
  if (p.pads.size() != 2 * rank)
    return invalid_argument("pads " + ints_to_string(p.pads) + " must have 2 values per dim of " +
                            shape_to_string(input) + " (" + std::to_string(2 * rank) + ")");
  return p;
}

Result<ReduceParams> reduce_params(const std::string& op, const Attributes& attrs, int opset, const Shape& input,
                                   bool has_axes_input, const Tensor* axes_input) {
  const bool axes_as_input = (op == "ReduceSum" && opset >= 13) || opset >= 18;
  std::vector<int64_t> axes;
  if (axes_as_input) {
    if (attrs.has("axes"))
      return invalid_argument("axes is input 1 of " + op + (op == "ReduceSum" ? " from opset 13" : " from opset 18") +
                              " on, not an attribute (graph opset " + std::to_string(opset) + ")");
    if (has_axes_input) {
      if (!axes_input) return unsupported("input 1 (axes) must be known");
      if (axes_input->dtype() != DType::kInt64 || axes_input->type().rank() > 1)
        return invalid_argument("input 1 (axes) must be a 1-D i64 tensor, got " + axes_input->type().to_string());
      axes = axes_input->to_int64_vector();
    }
  } else {
    if (has_axes_input)
      return invalid_argument("takes axes as an attribute at opset " + std::to_string(opset) + ", not as input 1");
    HS_ASSIGN_OR_RETURN(axes, attrs.get_ints("axes", {}));
  }
  ReduceParams p;
  HS_ASSIGN_OR_RETURN(p.keepdims, read_flag(attrs, "keepdims", 1));
  HS_ASSIGN_OR_RETURN(const bool noop_with_empty_axes, read_flag(attrs, "noop_with_empty_axes", 0));
  if (noop_with_empty_axes && !axes_as_input)
    return invalid_argument("attribute 'noop_with_empty_axes' exists only where axes is an input");
  p.noop = axes.empty() && noop_with_empty_axes;
  p.reduced.assign(input.size(), axes.empty() && !p.noop);
  for (int64_t a : axes) {
    auto axis = normalize_axis(a, static_cast<int64_t>(input.size()));
    if (!axis) return invalid_argument("axes " + ints_to_string(axes) + ": " + axis.status().message());
    if (p.reduced[static_cast<size_t>(*axis)])
      return invalid_argument("axes " + ints_to_string(axes) + " name axis " + std::to_string(*axis) + " twice");
    p.reduced[static_cast<size_t>(*axis)] = true;
  }
  return p;
}

Shape reduced_shape(const Shape& input, const ReduceParams& params) {
  Shape out;
  for (size_t i = 0; i < input.size(); ++i) {
    if (!params.reduced[i])
      out.push_back(input[i]);
    else if (params.keepdims)
      out.push_back(1);
  }
  return out;
}

// Output size per spatial axis: stride * (in - 1) + output_padding + dilated
// kernel - pads. Pads come from the attribute, or are derived from auto_pad
// (output = in * stride) or output_shape; of the derived total the larger
// half goes to the end for SAME_UPPER and to the start otherwise, as the
// ONNX operator text says.
Status dropout_passes_through(const Tensor* ratio, bool has_training, const Tensor* training) {
  const bool zero_ratio = ratio && ratio->num_elements() == 1 && ratio->to_float_vector()[0] == 0.f;
  if (zero_ratio || !has_training) return Status::ok();
  if (!training) return unsupported("input 2 (training_mode) must be a constant false, or the ratio a constant 0 (inference only)");
  if (training->num_elements() == 1 && training->int_at(0))
    return unsupported("training_mode = true with a ratio other than a constant 0 drops at random (inference only)");
  return Status::ok();
}

Result<ConvTransposeGeometry> conv_transpose_geometry(const Attributes& attrs, const Shape& x, const Shape& w) {
  if (x.size() < 3)
    return invalid_argument("ConvTranspose wants X of rank 3 or more (N, C, spatial...), got X " + shape_to_string(x));
  if (w.size() != x.size())
    return invalid_argument("weight " + shape_to_string(w) + " must have the rank of X " + shape_to_string(x));
  const size_t nsp = x.size() - 2;
  ConvTransposeGeometry g;
  HS_ASSIGN_OR_RETURN(g.group, attrs.get_int("group", 1));
  if (g.group < 1) return invalid_argument("attribute 'group' must be >= 1, got " + std::to_string(g.group));
  if (x[1] != w[0] || x[1] % g.group != 0)
    return invalid_argument("input has " + std::to_string(x[1]) + " channels, but weight " + shape_to_string(w) +
                            " with group " + std::to_string(g.group) + " expects " + std::to_string(w[0]) +
                            " (a multiple of the group)");
  g.out_channels = w[1] * g.group;
  const std::vector<int64_t> weight_kernel(w.begin() + 2, w.end());
  HS_ASSIGN_OR_RETURN(g.kernel, attrs.get_ints("kernel_shape", weight_kernel));
  if (g.kernel != weight_kernel)
    return invalid_argument("attribute 'kernel_shape' " + ints_to_string(g.kernel) +
                            " does not match the weight's spatial dims " + ints_to_string(weight_kernel));
  HS_ASSIGN_OR_RETURN(g.strides, axis_ints(attrs, "strides", nsp, 1, 1));
  HS_ASSIGN_OR_RETURN(g.dilations, axis_ints(attrs, "dilations", nsp, 1, 1));
  HS_ASSIGN_OR_RETURN(g.output_padding, axis_ints(attrs, "output_padding", nsp, 0, 0));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, axis_ints(attrs, "pads", 2 * nsp, 0, 0));
  HS_ASSIGN_OR_RETURN(const std::string auto_pad, attrs.get_string("auto_pad", "NOTSET"));
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    return invalid_argument("attribute 'auto_pad' is '" + auto_pad +
                            "', expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> output_shape, attrs.get_ints("output_shape", {}));
  if (output_shape.size() == nsp + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != nsp)
    return invalid_argument("attribute 'output_shape' " + ints_to_string(output_shape) + " must have " +
                            std::to_string(nsp) + " spatial dims");
  for (size_t i = 0; i < nsp; ++i)
    if (g.output_padding[i] >= g.strides[i] && g.output_padding[i] >= g.dilations[i])
      return invalid_argument("attribute 'output_padding' " + ints_to_string(g.output_padding) +
                              " must be smaller than the stride or the dilation on axis " + std::to_string(i));

  g.in.assign(x.begin() + 2, x.end());
  g.out.resize(nsp);
  g.pad_begin.resize(nsp);
  g.pad_end.resize(nsp);
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  for (size_t i = 0; i < nsp; ++i) {
    const int64_t full = g.strides[i] * (g.in[i] - 1) + g.output_padding[i] + (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (!output_shape.empty() || same) {
      const int64_t target = output_shape.empty() ? g.in[i] * g.strides[i] : output_shape[i];
      if (target <= 0)
        return invalid_argument("output size " + std::to_string(target) + " on spatial axis " + std::to_string(i) +
                                " is not positive");
      // Halved rounding down, as the ONNX reference does in Python: a
      // negative total (an output_shape beyond the full result) then pads
      // the end negatively, which extends the output like output_padding.
      const int64_t total = full - target;
      const int64_t low_half = total >= 0 ? total / 2 : -((1 - total) / 2);
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? low_half : total - low_half;
      g.pad_end[i] = total - g.pad_begin[i];
      g.out[i] = target;
    } else {
      const bool valid = auto_pad == "VALID";
      g.pad_begin[i] = valid ? 0 : pads[i];
      g.pad_end[i] = valid ? 0 : pads[nsp + i];
      g.out[i] = full - g.pad_begin[i] - g.pad_end[i];
      if (g.out[i] <= 0)
        return invalid_argument("pads " + ints_to_string(pads) + " leave no output on spatial axis " +
                                std::to_string(i));
    }
  }
  return g;
}

void register_extra_ops(OpSchemaTable& table) {
  add_schema(table, "Cast", 1, 1, 1, 1, true, cast_infer);
  add_schema(table, "Shape", 1, 1, 1, 1, false, shape_infer);
  add_schema(table, "ConstantOfShape", 1, 1, 1, 1, true, constant_of_shape_infer);
  add_schema(table, "Range", 3, 3, 1, 1, true, range_infer);
  add_schema(table, "Expand", 2, 2, 1, 1, true, expand_infer);
  add_schema(table, "Tile", 2, 2, 1, 1, true, tile_infer);
  // Split's input 1 (split sizes) exists from opset 13; split_sizes checks the form.
  add_schema(table, "Split", 1, 2, 1, kAnyCount, true, split_infer);
  // Pad has one input before opset 11, then (data, pads, constant_value).
  add_schema(table, "Pad", 1, 4, 1, 1, true, pad_infer);
  // Inputs ratio and training_mode exist from opset 12.
  add_schema(table, "Dropout", 1, 3, 1, 2, false, dropout_infer);

  const std::vector<DType> kOrdered = {DType::kFloat32, DType::kInt64, DType::kInt32};
  add_schema(table, "Equal", 2, 2, 1, 1, true,
             compare_infer({DType::kFloat32, DType::kInt64, DType::kInt32, DType::kBool}));
  for (const char* op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    add_schema(table, op, 2, 2, 1, 1, true, compare_infer(kOrdered));
  for (const char* op : {"And", "Or", "Xor"}) add_schema(table, op, 2, 2, 1, 1, true, compare_infer({DType::kBool}));
  add_schema(table, "Not", 1, 1, 1, 1, true, not_infer);
  add_schema(table, "Where", 3, 3, 1, 1, true, where_infer);
  add_schema(table, "Trilu", 1, 2, 1, 1, true, trilu_infer);

  for (const char* op : {"Erf", "Floor", "Ceil", "Round", "Log"})
    add_schema(table, op, 1, 1, 1, 1, true, unary_f32_infer);
  add_schema(table, "LeakyRelu", 1, 1, 1, 1, true, leaky_relu_infer);
  add_schema(table, "PRelu", 2, 2, 1, 1, true, prelu_infer);
  for (const char* op : {"Min", "Max", "Sum"})
    add_schema(table, op, 1, kAnyCount, 1, 1, true, variadic_infer(kOrdered));
  add_schema(table, "Mean", 1, kAnyCount, 1, 1, true, variadic_infer({DType::kFloat32}));

  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
    add_schema(table, op, 1, 2, 1, 1, true, reduce_infer);
  for (const char* op : {"ArgMax", "ArgMin"}) add_schema(table, op, 1, 1, 1, 1, true, arg_reduce_infer);

  add_schema(table, "ConvTranspose", 2, 3, 1, 1, true, conv_transpose_infer);
}

}  // namespace hetsched
