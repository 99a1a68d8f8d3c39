#include "graph/op_schema.h"

#include <algorithm>
#include <limits>

namespace hetsched {

const OpSchemaTable& op_schemas() {
  static const OpSchemaTable table = [] {
    OpSchemaTable t;
    register_elementwise_ops(t);
    register_nn_ops(t);
    register_tensor_ops(t);
    register_extra_ops(t);
    register_activation_ops(t);
    register_misc_ops(t);
    register_norm_ops(t);
    register_recurrent_ops(t);
    register_quant_ops(t);
    return t;
  }();
  return table;
}

const OpSchema* find_op_schema(std::string_view op) {
  const auto& t = op_schemas();
  auto it = t.find(op);
  return it == t.end() ? nullptr : &it->second;
}

Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return invalid_argument("shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                              " cannot be broadcast (dimension " + std::to_string(i) + ": " + std::to_string(da) +
                              " vs " + std::to_string(db) + ")");
    }
  }
  return out;
}

SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  int64_t span = 0, stride = 0;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    span = end - start;
    stride = step;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    span = start - end;
    stride = step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
  }
  return {start, span > 0 ? 1 + (span - 1) / stride : 0};
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  const int64_t lo = -rank, hi = rank - 1;
  if (axis < lo || axis > hi)
    return invalid_argument("axis " + std::to_string(axis) + " is out of range [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "] for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

InferFn with_node_context(InferFn fn) {
  return [fn = std::move(fn)](const InferContext& ctx, std::vector<TensorType>& outputs) -> Status {
    Status s = fn(ctx, outputs);
    if (s.is_ok()) return s;
    return Status(s.code(), ctx.error(s.message()).message());
  };
}

Status require_f32(const TensorType& type, const std::string& what) {
  if (type.dtype != DType::kFloat32) return invalid_argument(what + " must be f32, got " + type.to_string());
  return Status::ok();
}

}  // namespace hetsched
