// Lowering: the nodes of one XNNPACK segment defined as XNNPACK subgraph
// nodes, with their constants re-laid for XNNPACK (OIHW weights to OHWI,
// depthwise weights to 1HWO, Gemm/MatMul's B to [N, K], broadcast operands
// of NHWC ops to NHWC) and BatchNormalization folded into a Conv before it.
#pragma once

#include <xnnpack.h>

#include <cstdint>
#include <map>
#include <vector>

#include "delegates/cpu/xnnpack/op_params.h"
#include "delegates/cpu/xnnpack/segment_plan.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace hetsched::cpu::xnnpack {

class SubgraphLowering {
 public:
  // `graph`, `step` and `subgraph` are borrowed for the lowering's lifetime.
  SubgraphLowering(const Graph& graph, const EngineStep& step, xnn_subgraph_t subgraph)
      : graph_(graph), step_(step), subgraph_(subgraph) {}

  // Declares boundary value `value` as XNNPACK external value `id`, with
  // XNN_VALUE_FLAG_EXTERNAL_INPUT or _OUTPUT in `flags`. All boundary
  // values are declared before define_nodes().
  Status define_external(ValueId value, uint32_t id, uint32_t flags);

  // Defines every node of the step, in order. Errors name the node.
  Status define_nodes();

  // The data behind the subgraph's static values. XNNPACK reads it until
  // every runtime created from the subgraph is deleted, so the caller keeps
  // it at least that long.
  std::vector<AlignedBuffer> take_static_data() { return std::move(static_data_); }

 private:
  // XNNPACK's dims of a value in the layout the plan gave it.
  std::vector<size_t> dims_of(ValueId value) const;
  TensorLayout layout_of(ValueId value) const;
  // The XNNPACK id of a run-time value, defining an internal one on first use.
  Result<uint32_t> activation(ValueId value);
  // A static f32 value holding `data` (copied, with the slack XNNPACK may read past the end).
  Result<uint32_t> static_value(const std::vector<float>& data, const std::vector<size_t>& dims);
  // An operand of an elementwise op: a run-time value, or a constant re-laid
  // like the op's output.
  Result<uint32_t> operand(ValueId value, ValueId output);
  // A fresh internal value of the given dims (for ops lowered to two nodes).
  Result<uint32_t> internal_value(const std::vector<size_t>& dims);

  // The BatchNormalization that a Conv's output feeds alone, or kNoNode.
  NodeId foldable_batch_norm(const Node& conv) const;

  Status define_node(NodeId id);
  Status define_conv(const Node& node, NodeId folded_bn);
  Status define_conv_core(const ConvParams& p, uint32_t input_id, uint32_t output_id, std::vector<float> filter,
                          std::vector<float> bias);
  Status define_conv_transpose(const Node& node);
  Status define_pool(const Node& node);
  Status define_global_average_pool(const Node& node);
  Status define_resize(const Node& node);
  Status define_fully_connected(const Node& node);
  Status define_binary(const Node& node);
  Status define_unary(const Node& node);
  Status define_softmax(const Node& node);
  Status define_batch_norm(const Node& node);
  Status define_reshape(const Node& node);
  Status define_pad(const Node& node);
  Status define_prelu(const Node& node);

  const Graph& graph_;
  const EngineStep& step_;
  xnn_subgraph_t subgraph_;
  std::map<ValueId, uint32_t> ids_;
  std::vector<bool> folded_;  // nodes already lowered as part of another (a BatchNormalization into its Conv)
  std::vector<AlignedBuffer> static_data_;
};

}  // namespace hetsched::cpu::xnnpack
