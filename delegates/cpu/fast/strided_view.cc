#include "delegates/cpu/fast/strided_view.h"

#include <algorithm>
#include <string>

#include "graph/op_schema.h"

namespace hetsched::cpu::fast {

namespace {

bool is_reshape_kin(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
}

const Value* static_f32(const Graph& graph, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& value = graph.value(v);
  if (!value.type_known || !value.type.is_static() || value.type.dtype != DType::kFloat32) return nullptr;
  return &value;
}

// The factor a scalar Mul or Div by a constant multiplies its data input
// by, or nullopt when `node` is not one.
std::optional<float> scalar_factor(const Graph& graph, const Node& node) {
  if ((node.op != "Mul" && node.op != "Div") || node.inputs.size() != 2) return std::nullopt;
  // Div's divisor must be the constant; Mul's constant may be either input.
  for (size_t i : {size_t{1}, size_t{0}}) {
    if (node.op == "Div" && i == 0) break;
    const Value& c = graph.value(node.inputs[i]);
    const Value& x = graph.value(node.inputs[1 - i]);
    if (!c.is_constant() || c.type.dtype != DType::kFloat32 || c.type.num_elements() != 1 || x.is_constant())
      continue;
    // A scalar must not broadcast the data input to a higher rank.
    if (c.type.rank() > x.type.rank()) continue;
    const float f = c.constant->data<float>()[0];
    if (node.op == "Mul") return f;
    if (f == 0.f) return std::nullopt;
    return 1.f / f;
  }
  return std::nullopt;
}


const Tensor* constant_input(const Graph& graph, const Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return nullptr;
  return graph.value(node.inputs[i]).constant.get();
}

// Slice: each sliced axis starts further in and steps further; the output's
// static shape gives the lengths.
std::optional<StridedView> slice_view(const Graph& graph, const Node& node, StridedView view, const Shape& out) {
  const size_t rank = view.shape.size();
  std::vector<int64_t> starts, ends, axes, steps;
  if (graph.opset() < 10) {
    const Result<std::vector<int64_t>> s = node.attrs.get_ints("starts", {});
    const Result<std::vector<int64_t>> e = node.attrs.get_ints("ends", {});
    const Result<std::vector<int64_t>> a = node.attrs.get_ints("axes", {});
    if (!s.is_ok() || !e.is_ok() || !a.is_ok()) return std::nullopt;
    starts = *s;
    ends = *e;
    axes = *a;
  } else {
    const Tensor* st = constant_input(graph, node, 1);
    const Tensor* en = constant_input(graph, node, 2);
    if (!st || !en) return std::nullopt;
    starts = st->to_int64_vector();
    ends = en->to_int64_vector();
    const bool has_axes = node.inputs.size() > 3 && node.inputs[3] != kNoValue;
    const bool has_steps = node.inputs.size() > 4 && node.inputs[4] != kNoValue;
    if (has_axes) {
      const Tensor* ax = constant_input(graph, node, 3);
      if (!ax) return std::nullopt;
      axes = ax->to_int64_vector();
    }
    if (has_steps) {
      const Tensor* sp = constant_input(graph, node, 4);
      if (!sp) return std::nullopt;
      steps = sp->to_int64_vector();
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return std::nullopt;
  for (size_t i = 0; i < axes.size(); ++i) {
    const Result<int64_t> axis = normalize_axis(axes[i], static_cast<int64_t>(rank));
    if (!axis.is_ok() || steps[i] == 0) return std::nullopt;
    const size_t d = static_cast<size_t>(*axis);
    const SliceRange r = slice_range(view.shape[d], starts[i], ends[i], steps[i]);
    if (r.length != out[d]) return std::nullopt;
    view.offset += r.start * view.strides[d];
    view.strides[d] *= steps[i];
    view.shape[d] = r.length;
  }
  if (view.shape != out) return std::nullopt;
  return view;
}

// Gather of one constant index along an axis: a slice of length 1, the axis
// dropped for a scalar index.
std::optional<StridedView> select_view(const Graph& graph, const Node& node, StridedView view, const Shape& out) {
  const Tensor* index = constant_input(graph, node, 1);
  if (!index || index->num_elements() != 1 || index->type().rank() > 1) return std::nullopt;
  const Result<int64_t> attr = node.attrs.get_int("axis", 0);
  if (!attr.is_ok()) return std::nullopt;
  const Result<int64_t> axis = normalize_axis(*attr, static_cast<int64_t>(view.shape.size()));
  if (!axis.is_ok()) return std::nullopt;
  const size_t d = static_cast<size_t>(*axis);
  int64_t i = index->to_int64_vector()[0];
  if (i < 0) i += view.shape[d];
  if (i < 0 || i >= view.shape[d]) return std::nullopt;
  view.offset += i * view.strides[d];
  if (index->type().rank() == 0) {
    view.shape.erase(view.shape.begin() + static_cast<std::ptrdiff_t>(d));
    view.strides.erase(view.strides.begin() + static_cast<std::ptrdiff_t>(d));
  } else {
    view.shape[d] = 1;
  }
  if (view.shape != out) return std::nullopt;
  return view;
}

// Output `output` of a Split: the slice of its length (the output's static
// shape) along the axis, after the outputs before it.
std::optional<StridedView> split_view(const Graph& graph, const Node& node, StridedView view, size_t output) {
  const Result<int64_t> attr = node.attrs.get_int("axis", 0);
  if (!attr.is_ok()) return std::nullopt;
  const Result<int64_t> axis = normalize_axis(*attr, static_cast<int64_t>(view.shape.size()));
  if (!axis.is_ok()) return std::nullopt;
  const size_t d = static_cast<size_t>(*axis);
  int64_t start = 0;
  for (size_t i = 0; i <= output; ++i) {
    const Value* y = static_f32(graph, node.outputs[i]);
    if (!y || y->type.rank() != view.shape.size()) return std::nullopt;
    if (i == output) {
      const Shape& out = y->type.shape;
      if (start + out[d] > view.shape[d]) return std::nullopt;
      view.offset += start * view.strides[d];
      view.shape[d] = out[d];
      if (view.shape != out) return std::nullopt;
      return view;
    }
    start += y->type.shape[d];
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<int64_t>> transpose_perm(const Node& node, size_t rank) {
  std::vector<int64_t> perm;
  if (node.attrs.has("perm")) {
    HS_ASSIGN_OR_RETURN(perm, node.attrs.get_ints("perm", {}));
  } else {
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  if (perm.size() != rank) return invalid_argument("perm does not match the rank");
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    if (p < 0) p += static_cast<int64_t>(rank);
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)])
      return invalid_argument("perm is not a permutation");
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

StridedView contiguous_view(ValueId root, const Shape& shape) {
  StridedView v;
  v.root = root;
  v.shape = shape;
  v.strides.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) v.strides[d - 1] = v.strides[d] * shape[d];
  return v;
}

// torch's computeStride: the old dims fall into chunks that are contiguous
// among themselves; each chunk must be exactly covered by a run of new dims,
// which then step through it at the chunk's innermost stride.
std::optional<StridedView> reshape_view(const StridedView& view, const Shape& shape) {
  if (shape_elements(view.shape) != shape_elements(shape) || shape_elements(shape) == 0) return std::nullopt;
  StridedView out = view;
  out.shape = shape;
  out.strides.assign(shape.size(), 1);
  // Size-1 dims carry no stride of their own: drop them from the old side.
  std::vector<int64_t> dims, strides;
  for (size_t d = 0; d < view.shape.size(); ++d)
    if (view.shape[d] != 1) {
      dims.push_back(view.shape[d]);
      strides.push_back(view.strides[d]);
    }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  if (dims.empty()) return out;  // one element: any strides
  int64_t chunk_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    tensor_numel *= dims[static_cast<size_t>(d)];
    const bool chunk_ends = d == 0 || strides[static_cast<size_t>(d - 1)] != tensor_numel * chunk_stride;
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || shape[static_cast<size_t>(view_d)] == 1)) {
      out.strides[static_cast<size_t>(view_d)] = view_numel * chunk_stride;
      view_numel *= shape[static_cast<size_t>(view_d)];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = strides[static_cast<size_t>(d - 1)];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

StridedView transpose_view(const StridedView& view, const std::vector<int64_t>& perm) {
  StridedView out = view;
  for (size_t i = 0; i < perm.size(); ++i) {
    out.shape[i] = view.shape[static_cast<size_t>(perm[i])];
    out.strides[i] = view.strides[static_cast<size_t>(perm[i])];
  }
  return out;
}

bool is_layout_node(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.outputs.empty()) return false;
  if (node.op == "Split") {
    for (ValueId v : node.outputs)
      if (v == kNoValue) return false;
    return true;
  }
  if (node.outputs.size() != 1) return false;
  if (node.op == "Transpose" || is_reshape_kin(node.op) || node.op == "Slice") return true;
  if (node.op == "Gather") {
    const Tensor* index = constant_input(graph, node, 1);
    return index && index->num_elements() == 1 && index->type().rank() <= 1;
  }
  return scalar_factor(graph, node).has_value();
}

ValueId data_input(const Graph& graph, const Node& node) {
  if (node.op == "Mul" && node.inputs.size() == 2 && graph.value(node.inputs[0]).is_constant()) return node.inputs[1];
  return node.inputs[0];
}

std::optional<StridedView> apply_layout_node(const Graph& graph, const Node& node, const StridedView& input,
                                             size_t output) {
  if (output >= node.outputs.size()) return std::nullopt;
  const Value* x = static_f32(graph, data_input(graph, node));
  const Value* y = static_f32(graph, node.outputs[output]);
  if (!x || !y || x->type.shape != input.shape || !is_layout_node(graph, node)) return std::nullopt;
  const Shape& out = y->type.shape;
  if (node.op == "Split") return split_view(graph, node, input, output);
  if (is_reshape_kin(node.op)) return reshape_view(input, out);
  if (node.op == "Transpose") {
    const Result<std::vector<int64_t>> perm = transpose_perm(node, input.shape.size());
    if (!perm.is_ok()) return std::nullopt;
    StridedView v = transpose_view(input, *perm);
    if (v.shape != out) return std::nullopt;
    return v;
  }
  if (node.op == "Slice") return slice_view(graph, node, input, out);
  if (node.op == "Gather") return select_view(graph, node, input, out);
  const std::optional<float> f = scalar_factor(graph, node);
  if (!f || out != input.shape) return std::nullopt;
  StridedView v = input;
  v.scale *= *f;
  return v;
}

bool keeps_elements_in_place(const Graph& graph, const Node& node) {
  if (!is_layout_node(graph, node) || node.outputs.size() != 1) return false;
  const ValueId x = data_input(graph, node);
  const Value* xv = static_f32(graph, x);
  const Value* yv = static_f32(graph, node.outputs[0]);
  if (!xv || !yv) return false;
  const std::optional<StridedView> v = apply_layout_node(graph, node, contiguous_view(x, xv->type.shape));
  if (!v || v->offset != 0 || v->scale != 1.f) return false;
  const StridedView plain = contiguous_view(x, yv->type.shape);
  for (size_t d = 0; d < plain.shape.size(); ++d)
    if (plain.shape[d] != 1 && plain.strides[d] != v->strides[d]) return false;
  return true;
}

std::optional<StridedView> invert_layout_node(const Graph& graph, const Node& node, const StridedView& output) {
  const Value* x = static_f32(graph, data_input(graph, node));
  const Value* y = static_f32(graph, node.outputs[0]);
  if (!x || !y || y->type.shape != output.shape || !is_layout_node(graph, node)) return std::nullopt;
  const Shape& in = x->type.shape;
  if (is_reshape_kin(node.op)) return reshape_view(output, in);
  if (node.op == "Transpose") {
    const Result<std::vector<int64_t>> perm = transpose_perm(node, in.size());
    if (!perm.is_ok()) return std::nullopt;
    // Input axis perm[i] is output axis i.
    StridedView v = output;
    for (size_t i = 0; i < perm->size(); ++i) {
      v.shape[static_cast<size_t>((*perm)[i])] = output.shape[i];
      v.strides[static_cast<size_t>((*perm)[i])] = output.strides[i];
    }
    return v;
  }
  if (node.op == "Slice" || node.op == "Gather" || node.op == "Split") return std::nullopt;
  const std::optional<float> f = scalar_factor(graph, node);
  if (!f || in != output.shape) return std::nullopt;
  StridedView v = output;
  v.scale *= *f;
  return v;
}

}  // namespace hetsched::cpu::fast
