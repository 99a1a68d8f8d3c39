#include "delegates/vulkan/norm_semantics.h"

#include <string>

#include "graph/op_schema.h"
#include "graph/ops_norm.h"

namespace hetsched::vulkan {

namespace {

Result<const Tensor*> constant_param(const Graph& graph, const Node& n, size_t i, const char* what) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return static_cast<const Tensor*>(nullptr);
  const Value& v = graph.value(n.inputs[i]);
  if (!v.is_constant()) return unsupported(n.op + "'s " + what + " must be a constant");
  if (v.type.dtype != DType::kFloat32) return unsupported(n.op + "'s " + what + " must be f32");
  return v.constant.get();
}

// `p` broadcast (one way, right-aligned) over `dims`, spelled out in row-major order.
void append_expanded(const Tensor& p, const Shape& dims, std::vector<float>& out) {
  const Shape& ps = p.shape();
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = 1;
  for (size_t i = ps.size(); i-- > 0;) {
    if (ps[i] != 1) strides[dims.size() - ps.size() + i] = stride;
    stride *= ps[i];
  }
  const float* src = p.data<float>();
  const int64_t total = shape_elements(dims);
  for (int64_t i = 0; i < total; ++i) {
    int64_t offset = 0, rest = i;
    for (size_t d = dims.size(); d-- > 0;) {
      offset += rest % dims[d] * strides[d];
      rest /= dims[d];
    }
    out.push_back(src[offset]);
  }
}

}  // namespace

Result<Normalization> read_normalization(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  const Shape& x = graph.value(n.inputs[0]).type.shape;
  HS_RETURN_IF_ERROR(check_stash_type(n.attrs));
  HS_ASSIGN_OR_RETURN(const Tensor* scale, constant_param(graph, n, 1, "scale"));
  HS_ASSIGN_OR_RETURN(const Tensor* bias, constant_param(graph, n, 2, "B"));
  if (!scale) return invalid_argument(n.op + " needs a scale input");
  Normalization out;
  if (n.op == "LayerNormalization") {
    const Shape bias_shape = bias ? bias->shape() : Shape{};
    HS_ASSIGN_OR_RETURN(const LayerNormParams p,
                        layer_norm_params(n.attrs, x, scale->shape(), bias ? &bias_shape : nullptr));
    out.rows = p.outer;
    out.inner = p.inner;
    out.epsilon = p.epsilon;
    const Shape row(x.begin() + p.axis, x.end());
    append_expanded(*scale, row, out.table);
    if (bias)
      append_expanded(*bias, row, out.table);
    else
      out.table.resize(out.table.size() * 2, 0.f);
    return out;
  }
  if (!bias) return invalid_argument("GroupNormalization needs a B input");
  HS_ASSIGN_OR_RETURN(const GroupNormParams p,
                      group_norm_params(n.attrs, graph.opset(), x, scale->shape(), bias->shape()));
  const int64_t channels = x[1];
  const int64_t plane = shape_elements(Shape(x.begin() + 2, x.end()));
  const int64_t per_group = channels / p.groups;
  out.rows = x[0] * p.groups;
  out.inner = per_group * plane;
  out.param_rows = p.groups;
  out.epsilon = p.epsilon;
  for (const Tensor* t : {scale, bias}) {
    const float* v = t->data<float>();
    for (int64_t g = 0; g < p.groups; ++g)
      for (int64_t i = 0; i < out.inner; ++i) out.table.push_back(v[p.per_channel ? g * per_group + i / plane : g]);
  }
  return out;
}

}  // namespace hetsched::vulkan
