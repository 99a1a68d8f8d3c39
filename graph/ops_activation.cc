// Shape inference for the elementwise activations and unary math that
// classic and exported models use beyond the core set: the inverse and
// hyperbolic trigonometric functions, Sign, Softplus, Softsign, Elu, Selu,
// Celu, ThresholdedRelu, Shrink and Mish. Each maps f32 to f32 of the same
// shape; the ones with attributes check them here, so a bad one is an import
// error, not a kernel error.
#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace hetsched {

namespace {

// The attributes each op reads, with ONNX's defaults.
const std::vector<std::pair<std::string, std::vector<std::string>>> kActivations = {
    {"Tan", {}},   {"Asin", {}},  {"Acos", {}},  {"Atan", {}},   {"Sinh", {}},     {"Cosh", {}},
    {"Asinh", {}}, {"Acosh", {}}, {"Atanh", {}}, {"Sign", {}},   {"Softplus", {}}, {"Softsign", {}},
    {"Mish", {}},  {"Elu", {"alpha"}},           {"Selu", {"alpha", "gamma"}},     {"Celu", {"alpha"}},
    {"ThresholdedRelu", {"alpha"}},              {"Shrink", {"bias", "lambd"}},
};

InferFn activation_infer(std::vector<std::string> float_attrs) {
  return [float_attrs](const InferContext& ctx, std::vector<TensorType>& outputs) -> Status {
    HS_RETURN_IF_ERROR(require_f32(ctx.input_type(0), "input"));
    for (const std::string& name : float_attrs) HS_RETURN_IF_ERROR(ctx.attrs().get_float(name, 0.f).status());
    if (ctx.node().op == "Celu") {
      HS_ASSIGN_OR_RETURN(const float alpha, ctx.attrs().get_float("alpha", 1.f));
      if (alpha == 0.f) return invalid_argument("attribute 'alpha' must not be 0 (Celu divides by it)");
    }
    outputs[0] = ctx.input_type(0);
    return Status::ok();
  };
}

}  // namespace

void register_activation_ops(OpSchemaTable& table) {
  for (const auto& [op, attrs] : kActivations) {
    OpSchema schema;
    schema.name = op;
    schema.infer = with_node_context(activation_infer(attrs));
    table[op] = std::move(schema);
  }
}

}  // namespace hetsched
