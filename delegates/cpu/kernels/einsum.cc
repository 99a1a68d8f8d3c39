// The portable Einsum kernel: every element of the output sums, over the
// ids the output lacks, the product of the operands' elements, by plain
// index arithmetic (graph/einsum.h reads the equation). A letter repeated
// in one operand (a diagonal) adds its strides. The reference the lowering
// to MatMul (graph/passes/lower_einsum.h) is tested against; the models'
// Einsums of two operands run as MatMuls instead.
#include <vector>

#include "delegates/cpu/kernel.h"
#include "delegates/cpu/kernels/extra_util.h"
#include "graph/einsum.h"

namespace hetsched::cpu {

Status einsum_kernel(const KernelContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.has_input(i) || ctx.in(i).dtype() != DType::kFloat32)
      return invalid_argument("input " + std::to_string(i) + " must be a present f32 tensor");
    shapes.push_back(ctx.in(i).shape());
  }
  HS_ASSIGN_OR_RETURN(const std::string equation, ctx.attrs().get_string("equation", ""));
  HS_ASSIGN_OR_RETURN(const EinsumSpec spec, parse_einsum(equation, shapes));
  Shape out_shape;
  for (int id : spec.output) out_shape.push_back(spec.sizes[static_cast<size_t>(id)]);
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{DType::kFloat32, out_shape}));

  // The ids in loop order: the output's, then the summed ones.
  const size_t ids = static_cast<size_t>(spec.num_ids());
  std::vector<int> order(spec.output.begin(), spec.output.end());
  std::vector<bool> in_output(ids, false);
  for (int id : spec.output) in_output[static_cast<size_t>(id)] = true;
  for (size_t id = 0; id < ids; ++id)
    if (!in_output[id]) order.push_back(static_cast<int>(id));
  // Per operand, its element stride along each id (0 where broadcast).
  const size_t n = spec.operands.size();
  std::vector<std::vector<int64_t>> stride(n, std::vector<int64_t>(ids, 0));
  for (size_t i = 0; i < n; ++i) {
    int64_t s = 1;
    for (size_t d = shapes[i].size(); d-- > 0;) {
      if (shapes[i][d] != 1) stride[i][static_cast<size_t>(spec.operands[i][d])] += s;
      s *= shapes[i][d];
    }
  }
  float* y = ctx.out(0).data<float>();
  const int64_t outputs = ctx.out(0).num_elements();
  if (outputs == 0) return Status::ok();
  // A crafted equation can ask for more steps than any tensor has elements
  // ("ab,cd->" over two large matrices): refused rather than run for hours
  // (counted in double first: the product of the summed sizes may overflow).
  constexpr double kMaxSteps = 8e9;
  double steps = static_cast<double>(outputs);
  for (size_t k = spec.output.size(); k < order.size(); ++k) steps *= static_cast<double>(spec.sizes[static_cast<size_t>(order[k])]);
  if (steps > kMaxSteps)
    return unsupported("equation '" + equation + "' needs " + std::to_string(steps) +
                       " multiply-adds on the portable kernel, more than the 8e9 it runs");
  int64_t summed = 1;
  for (size_t k = spec.output.size(); k < order.size(); ++k) summed *= spec.sizes[static_cast<size_t>(order[k])];
  // One odometer over every id in `order`, the last fastest: each run of
  // `summed` steps is one output element, in the output's order.
  std::vector<int64_t> index(ids, 0);
  std::vector<int64_t> at(n, 0);  // each operand's offset at `index`
  for (int64_t o = 0; o < outputs; ++o) {
    double sum = 0;
    for (int64_t r = 0; r < summed; ++r) {
      double product = 1;
      for (size_t i = 0; i < n; ++i) product *= ctx.in(i).data<float>()[at[i]];
      sum += product;
      for (size_t k = order.size(); k-- > 0;) {
        const size_t id = static_cast<size_t>(order[k]);
        for (size_t i = 0; i < n; ++i) at[i] += stride[i][id];
        if (++index[id] < spec.sizes[id]) break;
        for (size_t i = 0; i < n; ++i) at[i] -= stride[i][id] * index[id];
        index[id] = 0;
      }
    }
    y[o] = static_cast<float>(sum);
  }
  return Status::ok();
}

}  // namespace hetsched::cpu
