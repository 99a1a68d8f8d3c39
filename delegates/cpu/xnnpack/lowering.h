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

  // The data behind the subgraph's static values that runtimes read while
  // they run (elementwise operands, scales): the caller keeps it until every
  // runtime created from the subgraph is deleted.
  std::vector<AlignedBuffer> take_static_data() { return std::move(static_data_); }
  // The weights and biases of convolutions, deconvolutions and fully
  // connected nodes: XNNPACK packs them into its own buffers when it creates
  // the runtime and never reads them again, so the caller frees them right
  // after xnn_create_runtime_v2 (they would otherwise double the resident
  // weights: ResNet-50's 98 MiB).
  std::vector<AlignedBuffer> take_packed_weights() { return std::move(packed_weights_); }

 private:
  // XNNPACK's dims of a value in the layout the plan gave it.
  std::vector<size_t> dims_of(ValueId value) const;
  TensorLayout layout_of(ValueId value) const;
  // The XNNPACK id of a run-time value, defining an internal one on first use.
  Result<uint32_t> activation(ValueId value);
  // A static f32 value holding `data` (copied, with the slack XNNPACK may
  // read past the end). `packed`: a weight or bias XNNPACK packs at runtime
  // creation (see take_packed_weights).
  Result<uint32_t> static_value(const std::vector<float>& data, const std::vector<size_t>& dims, bool packed = false);
  Result<uint32_t> packed_weight(const std::vector<float>& data, const std::vector<size_t>& dims) {
    return static_value(data, dims, true);
  }
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
  Status define_spatial_mean(const Node& node);  // ReduceMean over H and W
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
  std::vector<AlignedBuffer> packed_weights_;
};

}  // namespace hetsched::cpu::xnnpack
