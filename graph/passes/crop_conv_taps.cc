#include "graph/passes/crop_conv_taps.h"

#include <string>
#include <vector>

#include "graph/conv_reach.h"

namespace hetsched {

namespace {

// The first and last kernel index along one axis that reaches the input
// for some output (outputs_reaching_input); {-1, -1} when none does.
std::pair<int64_t, int64_t> live_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t pad,
                                      int64_t dilation) {
  int64_t first = -1, last = -1;
  for (int64_t k = 0; k < kernel; ++k) {
    const auto [o0, o1] = outputs_reaching_input(in, out, stride, pad, k, dilation);
    if (o1 == o0) continue;
    if (first < 0) first = k;
    last = k;
  }
  return {first, last};
}

bool crop_one(Graph& graph, NodeId id) {
  const Node& conv = graph.node(id);
  if (conv.op != "Conv" || conv.inputs.size() < 2 || conv.inputs[0] == kNoValue || conv.outputs.size() != 1) return false;
  const Value& x = graph.value(conv.inputs[0]);
  const Value& y = graph.value(conv.outputs[0]);
  const Value& wv = graph.value(conv.inputs[1]);
  if (!x.type_known || !y.type_known || !x.type.is_static() || !y.type.is_static() || x.type.rank() != 4 ||
      !wv.is_constant() || wv.constant->dtype() != DType::kFloat32 || wv.constant->shape().size() != 4)
    return false;
  const Result<std::string> auto_pad = conv.attrs.get_string("auto_pad", "NOTSET");
  if (!auto_pad.is_ok() || (*auto_pad != "NOTSET" && *auto_pad != "VALID")) return false;
  const Tensor& w = *wv.constant;
  const int64_t kh = w.shape()[2], kw = w.shape()[3];
  const Result<std::vector<int64_t>> pads = conv.attrs.get_ints("pads", {0, 0, 0, 0});
  const Result<std::vector<int64_t>> strides = conv.attrs.get_ints("strides", {1, 1});
  const Result<std::vector<int64_t>> dilations = conv.attrs.get_ints("dilations", {1, 1});
  if (!pads.is_ok() || !strides.is_ok() || !dilations.is_ok() || pads->size() != 4 || strides->size() != 2 ||
      dilations->size() != 2)
    return false;
  std::vector<int64_t> p = *auto_pad == "VALID" ? std::vector<int64_t>{0, 0, 0, 0} : *pads;
  std::vector<int64_t> d = *dilations;
  const auto [h0, h1] = live_taps(x.type.shape[2], y.type.shape[2], kh, (*strides)[0], p[0], d[0]);
  const auto [w0, w1] = live_taps(x.type.shape[3], y.type.shape[3], kw, (*strides)[1], p[1], d[1]);
  if (h0 < 0 || w0 < 0) return false;
  if (h0 == 0 && h1 == kh - 1 && w0 == 0 && w1 == kw - 1) return false;
  p[0] -= h0 * d[0];
  p[2] -= (kh - 1 - h1) * d[0];
  p[1] -= w0 * d[1];
  p[3] -= (kw - 1 - w1) * d[1];
  for (int64_t v : p)
    if (v < 0) return false;
  const int64_t nh = h1 - h0 + 1, nw = w1 - w0 + 1;
  if (nh == 1) d[0] = 1;
  if (nw == 1) d[1] = 1;
  const int64_t m = w.shape()[0], c = w.shape()[1];
  Tensor cropped(TensorType{DType::kFloat32, {m, c, nh, nw}});
  float* out = cropped.data<float>();
  const float* in = w.data<float>();
  for (int64_t mc = 0; mc < m * c; ++mc)
    for (int64_t i = 0; i < nh; ++i)
      for (int64_t j = 0; j < nw; ++j) *out++ = in[(mc * kh + h0 + i) * kw + w0 + j];
  const std::string stem = graph.value(conv.outputs[0]).name;
  const ValueId w_id = graph.add_constant(graph.unique_value_name(stem + "_cropped_weight"), std::move(cropped));
  Node& n = graph.node(id);
  n.inputs[1] = w_id;
  n.attrs.set("pads", Attribute{p});
  n.attrs.set("dilations", Attribute{d});
  n.attrs.set("kernel_shape", Attribute{std::vector<int64_t>{nh, nw}});
  n.attrs.set("auto_pad", Attribute{std::string("NOTSET")});
  return true;
}

}  // namespace

Result<int> crop_conv_taps(Graph& graph) {
  int cropped = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) cropped += crop_one(graph, id);
  return cropped;
}

}  // namespace hetsched
