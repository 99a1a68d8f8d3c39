#include "examples/rfc_model.h"

#include "graph/builder.h"

namespace hetsched::examples {

Result<Graph> make_rfc_model() {
  GraphBuilder b("rfc_model");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
  const ValueId channel_index = b.constant_i64("channel_index", {3}, {2, 0, 1});
  const ValueId row_index = b.constant_i64("row_index", {4}, {3, 1, 2, 0});
  // col_pattern.view(1,1,1,4).repeat(1,3,4,1)
  std::vector<int64_t> cols;
  for (int i = 0; i < 3 * 4; ++i) cols.insert(cols.end(), {3, 1, 2, 0});
  const ValueId col_gather_index = b.constant_i64("col_gather_index", {1, 3, 4, 4}, cols);

  const std::vector<int64_t> swap_hw{0, 1, 3, 2};
  ValueId t = b.op("Transpose", {x}, {{"perm", swap_hw}}, "transpose_in");
  t = b.op("AveragePool", {t}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}},
           "avg_pool2d");
  t = b.op("Gather", {t, channel_index}, {{"axis", int64_t{1}}}, "index_select_channels");
  t = b.op("GatherElements", {t, col_gather_index}, {{"axis", int64_t{3}}}, "gather_cols");
  t = b.op("Gather", {t, row_index}, {{"axis", int64_t{2}}}, "index_select_rows");
  const ValueId s = b.op("Sin", {t}, {}, "sin");
  const ValueId c = b.op("Cos", {t}, {}, "cos");
  const ValueId r = b.op("Reciprocal", {c}, {}, "reciprocal");
  const ValueId y = b.op("Mul", {s, r}, {}, "mul");
  b.output(b.op("Transpose", {y}, {{"perm", swap_hw}}, "transpose_out"));
  return b.build();
}

Tensor rfc_model_input() {
  Tensor t(TensorType{DType::kFloat32, {1, 3, 8, 8}});
  auto v = t.span<float>();
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v[i] = -0.8f + 1.6f * static_cast<float>(i) / static_cast<float>(n - 1);
  return t;
}

}  // namespace hetsched::examples
