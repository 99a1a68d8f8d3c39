// Shape inference for the data-movement ops: Transpose, Reshape, Flatten,
// Identity, Squeeze, Unsqueeze, Concat, Slice, Gather, GatherElements, Resize.
//
// Every op follows ONNX semantics for opsets 9 to 21. Shapes must come out
// static, so every input that decides an output shape (Reshape's shape,
// Slice's starts/ends, Resize's scales/sizes, ...) must be a constant.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "graph/op_schema.h"
#include "graph/resize_taps.h"
#include "graph/passes/fuse_channel_shuffle.h"

namespace hetsched {

namespace {

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s + "]";
}

std::string join(const std::vector<std::string_view>& names) {
  std::string s;
  for (std::string_view n : names) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// Re-labels an attribute or axis error (which knows no node) with the node's name.
template <typename T>
Result<T> on_node(const InferContext& ctx, Result<T> r) {
  if (!r.is_ok()) return ctx.error(r.status().message());
  return r;
}

// An axis attribute/input value in [-rank, rank - 1], normalised; `what` names it in errors.
Result<int64_t> node_axis(const InferContext& ctx, std::string_view what, int64_t axis, int64_t rank) {
  Result<int64_t> r = normalize_axis(axis, rank);
  if (!r.is_ok()) return ctx.error(std::string(what) + ": " + r.status().message());
  return r;
}

// The values of constant integer input `i` (a scalar or a 1-D i64/i32 tensor).
// `what` names the input in errors, e.g. "Reshape's shape".
Result<std::vector<int64_t>> constant_ints(const InferContext& ctx, size_t i, const std::string& what,
                                           const std::string& why_constant) {
  const Tensor* t = ctx.input_constant(i);
  if (!t) return ctx.error(what + " must be a constant (" + why_constant + ")");
  if (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)
    return ctx.error(what + " must be i64 or i32, got " + t->type().to_string());
  if (t->type().rank() > 1) return ctx.error(what + " must be 1-D, got " + t->type().to_string());
  return t->to_int64_vector();
}

// Normalises a list of axes against `rank`, refusing out-of-range and repeated ones.
Result<std::vector<int64_t>> normalize_axes(const InferContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t a : axes) {
    HS_ASSIGN_OR_RETURN(int64_t n, node_axis(ctx, "axes " + ints_to_string(axes), a, rank));
    if (!seen.insert(n).second)
      return ctx.error("axes " + ints_to_string(axes) + " name axis " + std::to_string(n) + " twice");
    out.push_back(n);
  }
  return out;
}

// --- Transpose ---------------------------------------------------------------

Status infer_transpose(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& in = ctx.input_type(0);
  const int64_t rank = static_cast<int64_t>(in.rank());
  std::vector<int64_t> reversed(static_cast<size_t>(rank));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> perm, on_node(ctx, ctx.attrs().get_ints("perm", reversed)));
  std::vector<bool> used(static_cast<size_t>(rank), false);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (size_t i = 0; valid && i < perm.size(); ++i) {
    valid = perm[i] >= 0 && perm[i] < rank && !used[static_cast<size_t>(perm[i])];
    if (valid) used[static_cast<size_t>(perm[i])] = true;
  }
  if (!valid)
    return ctx.error("perm " + ints_to_string(perm) + " is not a permutation of 0.." + std::to_string(rank - 1) +
                     " for input " + in.to_string());
  outs[0].dtype = in.dtype;
  for (int64_t p : perm) outs[0].shape.push_back(in.shape[static_cast<size_t>(p)]);
  return Status::ok();
}

// --- Reshape, Flatten, Identity ------------------------------------------------

Status infer_reshape(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& in = ctx.input_type(0);
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> requested,
                      constant_ints(ctx, 1, "Reshape's shape", "dynamic reshape is not supported"));
  HS_ASSIGN_OR_RETURN(int64_t allowzero, on_node(ctx, ctx.attrs().get_int("allowzero", 0)));
  const std::string what = "cannot reshape " + in.to_string() + " (" + std::to_string(in.num_elements()) +
                           " elements) to shape " + ints_to_string(requested);
  Shape shape;
  int64_t inferred_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < requested.size(); ++i) {
    int64_t d = requested[i];
    if (d == -1) {
      if (inferred_at >= 0) return ctx.error(what + ": more than one -1");
      inferred_at = static_cast<int64_t>(i);
    } else if (d < -1) {
      return ctx.error(what + ": dim " + std::to_string(i) + " is " + std::to_string(d));
    } else if (d == 0 && allowzero == 0) {
      if (i >= in.rank())
        return ctx.error(what + ": dim " + std::to_string(i) + " is 0 (copy the input dim) but the input has rank " +
                         std::to_string(in.rank()));
      d = in.shape[i];
    } else if (d == 0) {
      has_zero = true;
    }
    shape.push_back(d);
  }
  // ONNX: with allowzero=1 a 0 is a real zero, which leaves a -1 nothing to divide.
  if (has_zero && inferred_at >= 0) return ctx.error(what + ": -1 together with 0 under allowzero=1");
  if (inferred_at >= 0) {
    int64_t known = 1;
    bool overflow = false;
    for (size_t i = 0; i < shape.size(); ++i)
      if (static_cast<int64_t>(i) != inferred_at) overflow |= __builtin_mul_overflow(known, shape[i], &known);
    if (overflow || known == 0 || in.num_elements() % known != 0)
      return ctx.error(what + ": " + std::to_string(in.num_elements()) + " elements do not divide into the other dims");
    shape[static_cast<size_t>(inferred_at)] = in.num_elements() / known;
  }
  if (shape_elements(shape) != in.num_elements())
    return ctx.error(what + ": the output shape " + shape_to_string(shape) + " has " +
                     std::to_string(shape_elements(shape)) + " elements");
  outs[0] = {in.dtype, std::move(shape)};
  return Status::ok();
}

Status infer_flatten(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& in = ctx.input_type(0);
  const int64_t rank = static_cast<int64_t>(in.rank());
  HS_ASSIGN_OR_RETURN(int64_t axis, on_node(ctx, ctx.attrs().get_int("axis", 1)));
  // Flatten's axis may equal the rank (everything goes to the outer dim).
  if (axis < -rank || axis > rank)
    return ctx.error("axis " + std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
                     std::to_string(rank) + "] for input " + in.to_string());
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in.shape[static_cast<size_t>(i)];
  outs[0] = {in.dtype, {outer, inner}};
  return Status::ok();
}

Status infer_identity(const InferContext& ctx, std::vector<TensorType>& outs) {
  outs[0] = ctx.input_type(0);
  return Status::ok();
}

// hetsched's channel shuffle (graph/passes/fuse_channel_shuffle.h, made by
// the CPU delegate from ShuffleNet's [Concat,] Reshape, Transpose,
// Reshape): f32 [N,Ci,H,W] inputs, concatenated along C, the same type
// out, `group` dividing C.
Status infer_channel_shuffle(const InferContext& ctx, std::vector<TensorType>& outs) {
  TensorType y = ctx.input_type(0);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& x = ctx.input_type(i);
    if (x.dtype != DType::kFloat32 || x.rank() != 4)
      return ctx.error("expects f32 [N,C,H,W] inputs, got " + x.to_string());
    if (x.shape[0] != y.shape[0] || x.shape[2] != y.shape[2] || x.shape[3] != y.shape[3])
      return ctx.error("inputs " + y.to_string() + " and " + x.to_string() + " differ in N, H or W");
    if (i > 0) y.shape[1] = y.shape[1] < 0 || x.shape[1] < 0 ? -1 : y.shape[1] + x.shape[1];
  }
  HS_ASSIGN_OR_RETURN(const int64_t g, on_node(ctx, ctx.attrs().require_int("group")));
  if (g < 1 || (y.shape[1] >= 0 && y.shape[1] % g != 0))
    return ctx.error("group " + std::to_string(g) + " does not divide the channels of " + y.to_string());
  outs[0] = y;
  return Status::ok();
}

// --- Squeeze, Unsqueeze ----------------------------------------------------------

// Opset 13 moved `axes` from an attribute to an input; accepts only the form of the graph's opset.
// Sets `present` to false when no axes are given at all.
Result<std::vector<int64_t>> squeeze_axes(const InferContext& ctx, bool& present) {
  present = false;
  if (ctx.opset() >= 13) {
    if (ctx.attrs().has("axes"))
      return ctx.error("axes is an input from opset 13 on, not an attribute (graph opset " +
                       std::to_string(ctx.opset()) + ")");
    if (!ctx.has_input(1)) return std::vector<int64_t>{};
    present = true;
    return constant_ints(ctx, 1, ctx.node().op + "'s axes", "dynamic axes are not supported");
  }
  if (ctx.num_inputs() > 1)
    return ctx.error("takes axes as an attribute before opset 13, not as an input (graph opset " +
                     std::to_string(ctx.opset()) + ")");
  present = ctx.attrs().has("axes");
  return on_node(ctx, ctx.attrs().get_ints("axes", {}));
}

Status infer_squeeze(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& in = ctx.input_type(0);
  bool present = false;
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> raw_axes, squeeze_axes(ctx, present));
  std::vector<bool> drop(in.rank(), false);
  // An empty axes list means "no axes", as in onnxruntime.
  if (!present || raw_axes.empty()) {
    for (size_t i = 0; i < in.rank(); ++i) drop[i] = in.shape[i] == 1;
  } else {
    HS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, normalize_axes(ctx, raw_axes, static_cast<int64_t>(in.rank())));
    for (int64_t a : axes) {
      if (in.shape[static_cast<size_t>(a)] != 1)
        return ctx.error("cannot squeeze axis " + std::to_string(a) + " of " + in.to_string() + ": its size is " +
                         std::to_string(in.shape[static_cast<size_t>(a)]) + ", not 1");
      drop[static_cast<size_t>(a)] = true;
    }
  }
  outs[0].dtype = in.dtype;
  for (size_t i = 0; i < in.rank(); ++i)
    if (!drop[i]) outs[0].shape.push_back(in.shape[i]);
  return Status::ok();
}

Status infer_unsqueeze(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& in = ctx.input_type(0);
  bool present = false;
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> raw_axes, squeeze_axes(ctx, present));
  if (!present || raw_axes.empty()) return ctx.error("needs at least one axis to insert");
  const int64_t out_rank = static_cast<int64_t>(in.rank() + raw_axes.size());
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, normalize_axes(ctx, raw_axes, out_rank));
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) inserted[static_cast<size_t>(a)] = true;
  outs[0].dtype = in.dtype;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i)
    outs[0].shape.push_back(inserted[static_cast<size_t>(i)] ? 1 : in.shape[next++]);
  return Status::ok();
}

// --- Concat ---------------------------------------------------------------------

Status infer_concat(const InferContext& ctx, std::vector<TensorType>& outs) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (!ctx.has_input(i)) return ctx.error("input " + std::to_string(i) + " is missing");
  const TensorType& first = ctx.input_type(0);
  HS_ASSIGN_OR_RETURN(int64_t raw_axis, on_node(ctx, ctx.attrs().require_int("axis")));
  HS_ASSIGN_OR_RETURN(int64_t axis, node_axis(ctx, "axis", raw_axis, static_cast<int64_t>(first.rank())));
  TensorType out = first;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input_type(i);
    const std::string mismatch =
        "input " + std::to_string(i) + " " + t.to_string() + " does not match input 0 " + first.to_string() + ": ";
    if (t.dtype != first.dtype) return ctx.error(mismatch + "different dtypes");
    if (t.rank() != first.rank()) return ctx.error(mismatch + "different ranks");
    for (size_t d = 0; d < t.rank(); ++d)
      if (static_cast<int64_t>(d) != axis && t.shape[d] != first.shape[d])
        return ctx.error(mismatch + "dim " + std::to_string(d) + " differs (only axis " + std::to_string(axis) +
                         " may)");
    out.shape[static_cast<size_t>(axis)] += t.shape[static_cast<size_t>(axis)];
  }
  outs[0] = std::move(out);
  return Status::ok();
}

// --- Slice ----------------------------------------------------------------------

// ONNX Slice: clamps start/end per axis and counts the elements a step visits.
Status infer_slice(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& in = ctx.input_type(0);
  const int64_t rank = static_cast<int64_t>(in.rank());
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false, has_steps = false;
  if (ctx.opset() < 10) {
    if (ctx.num_inputs() > 1)
      return ctx.error("takes starts/ends/axes as attributes before opset 10, not as inputs (graph opset " +
                       std::to_string(ctx.opset()) + ")");
    HS_ASSIGN_OR_RETURN(starts, on_node(ctx, ctx.attrs().require_ints("starts")));
    HS_ASSIGN_OR_RETURN(ends, on_node(ctx, ctx.attrs().require_ints("ends")));
    has_axes = ctx.attrs().has("axes");
    HS_ASSIGN_OR_RETURN(axes, on_node(ctx, ctx.attrs().get_ints("axes", {})));
  } else {
    if (!ctx.has_input(1) || !ctx.has_input(2)) return ctx.error("needs starts and ends inputs from opset 10 on");
    const std::string why = "dynamic slicing is not supported";
    HS_ASSIGN_OR_RETURN(starts, constant_ints(ctx, 1, "Slice's starts", why));
    HS_ASSIGN_OR_RETURN(ends, constant_ints(ctx, 2, "Slice's ends", why));
    if ((has_axes = ctx.has_input(3))) {
      HS_ASSIGN_OR_RETURN(axes, constant_ints(ctx, 3, "Slice's axes", why));
    }
    if ((has_steps = ctx.has_input(4))) {
      HS_ASSIGN_OR_RETURN(steps, constant_ints(ctx, 4, "Slice's steps", why));
    }
  }
  if (ends.size() != starts.size())
    return ctx.error("starts " + ints_to_string(starts) + " and ends " + ints_to_string(ends) + " differ in length");
  if (has_axes && axes.size() != starts.size())
    return ctx.error("axes " + ints_to_string(axes) + " and starts " + ints_to_string(starts) + " differ in length");
  if (has_steps && steps.size() != starts.size())
    return ctx.error("steps " + ints_to_string(steps) + " and starts " + ints_to_string(starts) + " differ in length");
  if (!has_axes) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (!has_steps) steps.assign(starts.size(), 1);
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> norm_axes, normalize_axes(ctx, axes, rank));

  TensorType out = in;
  for (size_t i = 0; i < norm_axes.size(); ++i) {
    const int64_t dim = in.shape[static_cast<size_t>(norm_axes[i])];
    const int64_t step = steps[i];
    if (step == 0) return ctx.error("steps " + ints_to_string(steps) + " has a 0");
    if (dim == 0) continue;
    out.shape[static_cast<size_t>(norm_axes[i])] = slice_range(dim, starts[i], ends[i], step).length;
  }
  outs[0] = std::move(out);
  return Status::ok();
}

// --- Gather, GatherElements ----------------------------------------------------------

Status check_index_dtype(const InferContext& ctx, const TensorType& indices) {
  if (indices.dtype != DType::kInt64 && indices.dtype != DType::kInt32)
    return ctx.error("indices must be i64 or i32, got " + indices.to_string());
  return Status::ok();
}

// Constant indices are known now, so a bad one is reported before anything runs.
Status check_constant_indices(const InferContext& ctx, int64_t dim, int64_t axis) {
  const Tensor* t = ctx.input_constant(1);
  if (!t) return Status::ok();
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    const int64_t idx = t->int_at(i);
    if (idx < -dim || idx >= dim)
      return ctx.error("index " + std::to_string(idx) + " (element " + std::to_string(i) +
                       " of the indices) is out of range [" + std::to_string(-dim) + ", " + std::to_string(dim - 1) +
                       "] for axis " + std::to_string(axis) + " of size " + std::to_string(dim));
  }
  return Status::ok();
}

Status infer_gather(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  HS_RETURN_IF_ERROR(check_index_dtype(ctx, indices));
  HS_ASSIGN_OR_RETURN(int64_t raw_axis, on_node(ctx, ctx.attrs().get_int("axis", 0)));
  HS_ASSIGN_OR_RETURN(int64_t axis, node_axis(ctx, "axis", raw_axis, static_cast<int64_t>(data.rank())));
  HS_RETURN_IF_ERROR(check_constant_indices(ctx, data.shape[static_cast<size_t>(axis)], axis));
  outs[0].dtype = data.dtype;
  Shape& s = outs[0].shape;
  s.assign(data.shape.begin(), data.shape.begin() + axis);
  s.insert(s.end(), indices.shape.begin(), indices.shape.end());
  s.insert(s.end(), data.shape.begin() + axis + 1, data.shape.end());
  return Status::ok();
}

Status infer_gather_elements(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  HS_RETURN_IF_ERROR(check_index_dtype(ctx, indices));
  if (indices.rank() != data.rank())
    return ctx.error("indices " + indices.to_string() + " must have the rank of data " + data.to_string());
  HS_ASSIGN_OR_RETURN(int64_t raw_axis, on_node(ctx, ctx.attrs().get_int("axis", 0)));
  HS_ASSIGN_OR_RETURN(int64_t axis, node_axis(ctx, "axis", raw_axis, static_cast<int64_t>(data.rank())));
  // As in onnxruntime and torch.gather: off the axis an index position must exist in data.
  for (size_t d = 0; d < data.rank(); ++d)
    if (static_cast<int64_t>(d) != axis && indices.shape[d] > data.shape[d])
      return ctx.error("indices " + indices.to_string() + " are larger than data " + data.to_string() + " in dim " +
                       std::to_string(d) + " (only axis " + std::to_string(axis) + " may differ freely)");
  HS_RETURN_IF_ERROR(check_constant_indices(ctx, data.shape[static_cast<size_t>(axis)], axis));
  outs[0] = {data.dtype, indices.shape};
  return Status::ok();
}

// --- Resize ---------------------------------------------------------------------

// Checks a string attribute against the values hetsched runs, and the ONNX
// values it knows but does not run (an unsupported error rather than an invalid one).
Status check_choice(const InferContext& ctx, const std::string& name, const std::string& fallback,
                    const std::vector<std::string_view>& accepted, const std::vector<std::string_view>& known) {
  HS_ASSIGN_OR_RETURN(std::string v, on_node(ctx, ctx.attrs().get_string(name, fallback)));
  if (std::find(accepted.begin(), accepted.end(), v) != accepted.end()) return Status::ok();
  const std::string what = "attribute '" + name + "' = '" + v + "' is not supported (accepted: " + join(accepted) + ")";
  if (std::find(known.begin(), known.end(), v) != known.end()) return ctx.unsupported_error(what);
  return ctx.error(what);
}

// A Resize input that may be omitted or given as an empty tensor; nullptr then.
// Present and non-empty, it must be a constant.
Result<const Tensor*> optional_constant(const InferContext& ctx, size_t i, const std::string& name) {
  if (!ctx.has_input(i) || ctx.input_type(i).num_elements() == 0) return nullptr;
  const Tensor* t = ctx.input_constant(i);
  if (!t) return ctx.error("Resize's " + name + " must be a constant (dynamic resize is not supported)");
  return t;
}

// Opset 18's attributes, in the forms every engine runs unchanged:
// keep_aspect_ratio_policy 'stretch' (or any policy with scales, which it
// does not affect), antialias where it changes nothing (nearest mode, or no
// axis shrinking). Other forms are refused by name.
Status check_resize_opset18_attributes(const InferContext& ctx, bool by_scales, const Shape& in, const Shape& out) {
  if (ctx.opset() < 18) return Status::ok();
  HS_RETURN_IF_ERROR(check_choice(ctx, "keep_aspect_ratio_policy", "stretch",
                                  by_scales ? std::vector<std::string_view>{"stretch", "not_larger", "not_smaller"}
                                            : std::vector<std::string_view>{"stretch"},
                                  {"not_larger", "not_smaller"}));
  HS_ASSIGN_OR_RETURN(const int64_t antialias, on_node(ctx, ctx.attrs().get_int("antialias", 0)));
  if (antialias != 0 && antialias != 1)
    return ctx.error("attribute 'antialias' must be 0 or 1, got " + std::to_string(antialias));
  HS_ASSIGN_OR_RETURN(const std::string mode, on_node(ctx, ctx.attrs().get_string("mode", "nearest")));
  if (antialias == 1 && mode != "nearest")
    for (size_t d = 0; d < in.size(); ++d)
      if (out[d] < in[d])
        return ctx.unsupported_error("attribute 'antialias' = 1 when shrinking dim " + std::to_string(d) + " (" +
                                     std::to_string(in[d]) + " -> " + std::to_string(out[d]) +
                                     ") is not supported (accepted: antialias 0, or 1 with mode nearest or no dim "
                                     "shrinking)");
  return Status::ok();
}

// Any rank, any dims (resize_taps.h's resize_dims); the portable kernel
// runs every form, the GPU delegates and planned CPU kernels H and W of
// rank 4 (read_resize_mapping).
Status infer_resize(const InferContext& ctx, std::vector<TensorType>& outs) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype != DType::kFloat32 || x.rank() == 0)
    return ctx.unsupported_error("only f32 input of rank 1 or more is supported, got " + x.to_string());
  HS_RETURN_IF_ERROR(check_choice(ctx, "mode", "nearest", {"nearest", "linear", "cubic"}, {}));
  HS_ASSIGN_OR_RETURN(const int64_t exclude_outside, on_node(ctx, ctx.attrs().get_int("exclude_outside", 0)));
  if (exclude_outside != 0 && exclude_outside != 1)
    return ctx.error("attribute 'exclude_outside' must be 0 or 1, got " + std::to_string(exclude_outside));
  HS_RETURN_IF_ERROR(on_node(ctx, ctx.attrs().get_float("cubic_coeff_a", -0.75f)).status());
  const Tensor* scales = nullptr;
  const Tensor* sizes = nullptr;
  if (ctx.opset() < 11) {
    if (ctx.num_inputs() != 2 || !ctx.has_input(1))
      return ctx.error("takes inputs (X, scales) before opset 11, got " + std::to_string(ctx.num_inputs()) +
                       " inputs (graph opset " + std::to_string(ctx.opset()) + ")");
    HS_ASSIGN_OR_RETURN(scales, optional_constant(ctx, 1, "scales"));
    if (!scales) return ctx.error("scales must not be empty before opset 11");
  } else {
    HS_RETURN_IF_ERROR(
        check_choice(ctx, "coordinate_transformation_mode", "half_pixel",
                     {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nearest",
                      "half_pixel_symmetric"},
                     {"tf_crop_and_resize"}));
    HS_RETURN_IF_ERROR(check_choice(ctx, "nearest_mode", "round_prefer_floor",
                                    {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}, {}));
    HS_ASSIGN_OR_RETURN(scales, optional_constant(ctx, 2, "scales"));
    HS_ASSIGN_OR_RETURN(sizes, optional_constant(ctx, 3, "sizes"));
    if (!scales && !sizes) return ctx.error("needs one of scales or sizes, got neither");
    if (scales && sizes) return ctx.error("needs exactly one of scales or sizes, got both");
  }
  HS_ASSIGN_OR_RETURN(ResizeDims dims, on_node(ctx, resize_dims(ctx.attrs(), ctx.opset(), x.shape, scales, sizes)));
  HS_RETURN_IF_ERROR(check_resize_opset18_attributes(ctx, scales != nullptr, x.shape, dims.out));
  outs[0] = {x.dtype, std::move(dims.out)};
  return Status::ok();
}

}  // namespace

void register_tensor_ops(OpSchemaTable& table) {
  constexpr int kAnyCount = std::numeric_limits<int>::max();
  auto add = [&table](std::string name, int min_in, int max_in, bool is_compute, InferFn infer) {
    OpSchema s;
    s.name = name;
    s.min_inputs = min_in;
    s.max_inputs = max_in;
    s.is_compute = is_compute;
    s.infer = std::move(infer);
    table.emplace(std::move(name), std::move(s));
  };
  add("Transpose", 1, 1, true, infer_transpose);
  add("Reshape", 2, 2, false, infer_reshape);
  add("Flatten", 1, 1, false, infer_flatten);
  add("Identity", 1, 1, false, infer_identity);
  // Squeeze/Unsqueeze take axes as input 1 from opset 13; the shape functions check the form.
  add("Squeeze", 1, 2, false, infer_squeeze);
  add("Unsqueeze", 1, 2, false, infer_unsqueeze);
  add("Concat", 1, kAnyCount, true, infer_concat);
  // Opset < 10 Slice has one input; from 10 on three to five (checked in infer_slice).
  add("Slice", 1, 5, true, infer_slice);
  add("Gather", 2, 2, true, infer_gather);
  add("GatherElements", 2, 2, true, infer_gather_elements);
  // Opset 13 made roi and scales optional, so only X is required here.
  add("Resize", 1, 4, true, infer_resize);
  add(kChannelShuffleOp, 1, kAnyCount, true, infer_channel_shuffle);
}

}  // namespace hetsched
