// Shape inference for the recurrent ops RNN, GRU and LSTM (speech models,
// OCR's CRNNs, time series). The node is read and checked by
// graph/recurrent_spec.h, which the CPU kernel reads it through as well.
#include <string>
#include <vector>

#include "graph/op_schema.h"
#include "graph/recurrent_spec.h"

namespace hetsched {

namespace {

Status recurrent_infer(const InferContext& ctx, std::vector<TensorType>& outputs) {
  std::vector<const TensorType*> inputs(ctx.num_inputs(), nullptr);
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) inputs[i] = &ctx.input_type(i);
  HS_ASSIGN_OR_RETURN(const RecurrentSpec spec, read_recurrent_spec(ctx.node().op, ctx.attrs(), inputs));
  // Y, then the last hidden state Y_h and (LSTM) the last cell state Y_c.
  outputs[0] = TensorType{DType::kFloat32, spec.y_shape()};
  for (size_t i = 1; i < outputs.size(); ++i) outputs[i] = TensorType{DType::kFloat32, spec.state_shape()};
  return Status::ok();
}

void add(OpSchemaTable& table, const char* op, int max_inputs, int max_outputs) {
  OpSchema schema;
  schema.name = op;
  schema.min_inputs = 3;
  schema.max_inputs = max_inputs;
  schema.min_outputs = 1;
  schema.max_outputs = max_outputs;
  schema.infer = with_node_context(recurrent_infer);
  table[op] = std::move(schema);
}

}  // namespace

void register_recurrent_ops(OpSchemaTable& table) {
  add(table, "RNN", 6, 2);
  add(table, "GRU", 6, 2);
  add(table, "LSTM", 8, 3);
}

}  // namespace hetsched
