// Transpose of a 4-byte tensor, reduced first: axes of size 1 dropped and
// runs of axes that stay adjacent merged, so PyTorch's head shuffles
// ([64,1,128] -> [1,64,128], [1,64,1,3,128] -> [3,64,1,1,128]) become one
// copy or a copy per row; what is left walks output rows whose input
// offsets were computed at init.
#include <algorithm>
#include <cstring>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/strided_view.h"
#include "graph/op_schema.h"

namespace hetsched::cpu::fast {

namespace {

// Past this many output rows the offsets table costs more memory than the
// walk saves: the portable kernel takes the op.
constexpr int64_t kMaxRows = 1 << 16;

struct Reduced {
  std::vector<int64_t> dims;  // input dims, in input order
  std::vector<int64_t> perm;  // output axis i reads input axis perm[i]
};

// strided_view.h's transpose_perm; a perm it refuses leaves the op to the
// portable kernel.
Result<std::vector<int64_t>> read_perm(const Node& node, size_t rank) {
  Result<std::vector<int64_t>> perm = transpose_perm(node, rank);
  if (!perm.is_ok()) return unsupported(perm.status().message());
  return perm;
}

Reduced reduce(const Shape& shape, const std::vector<int64_t>& perm) {
  // Drop size-1 axes, renumbering the rest.
  std::vector<int64_t> index(shape.size(), -1);
  std::vector<int64_t> dims;
  for (size_t a = 0; a < shape.size(); ++a)
    if (shape[a] != 1) {
      index[a] = static_cast<int64_t>(dims.size());
      dims.push_back(shape[a]);
    }
  std::vector<int64_t> p;
  for (int64_t a : perm)
    if (index[static_cast<size_t>(a)] >= 0) p.push_back(index[static_cast<size_t>(a)]);
  // Merge output neighbours that are input neighbours too.
  std::vector<std::vector<int64_t>> groups;  // input axes of each merged output axis
  for (int64_t a : p) {
    if (!groups.empty() && groups.back().back() + 1 == a)
      groups.back().push_back(a);
    else
      groups.push_back({a});
  }
  // Merged axes in input order, and the permutation over them.
  std::vector<size_t> order(groups.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return groups[x][0] < groups[y][0]; });
  Reduced r;
  std::vector<int64_t> position(groups.size());
  for (size_t k = 0; k < order.size(); ++k) {
    int64_t size = 1;
    for (int64_t a : groups[order[k]]) size *= dims[static_cast<size_t>(a)];
    r.dims.push_back(size);
    position[order[k]] = static_cast<int64_t>(k);
  }
  for (size_t g = 0; g < groups.size(); ++g) r.perm.push_back(position[g]);
  return r;
}

class Transpose final : public FastOp {
 public:
  Transpose(const Tensor& x, Tensor& y, const Reduced& r, TaskPool* pool) : FastOp(y), x_(x), pool_(pool) {
    const size_t rank = r.dims.size();
    total_ = x.num_elements();
    if (rank <= 1) return;  // a plain copy
    std::vector<int64_t> in_stride(rank, 1);
    for (size_t a = rank - 1; a-- > 0;) in_stride[a] = in_stride[a + 1] * r.dims[a + 1];
    row_ = r.dims[static_cast<size_t>(r.perm.back())];
    step_ = in_stride[static_cast<size_t>(r.perm.back())];
    const int64_t rows = total_ / row_;
    offsets_.resize(static_cast<size_t>(rows));
    for (int64_t o = 0; o < rows; ++o) {
      int64_t rest = o, offset = 0;
      for (size_t i = rank - 1; i-- > 0;) {
        const size_t a = static_cast<size_t>(r.perm[i]);
        offset += rest % r.dims[a] * in_stride[a];
        rest /= r.dims[a];
      }
      offsets_[static_cast<size_t>(o)] = offset;
    }
  }

  Status run() override {
    const float* x = x_.data<float>();
    float* y = out();
    if (offsets_.empty()) {
      std::memcpy(y, x, static_cast<size_t>(total_) * sizeof(float));
      return Status::ok();
    }
    constexpr size_t kRowsPerTask = 64;
    const size_t rows = offsets_.size();
    parallel_tasks(pool_, (rows + kRowsPerTask - 1) / kRowsPerTask, static_cast<double>(total_), [&](size_t t) {
      for (size_t o = t * kRowsPerTask; o < std::min(rows, (t + 1) * kRowsPerTask); ++o) {
        const float* src = x + offsets_[o];
        float* dst = y + static_cast<int64_t>(o) * row_;
        if (step_ == 1) {
          std::memcpy(dst, src, static_cast<size_t>(row_) * sizeof(float));
        } else {
          for (int64_t j = 0; j < row_; ++j) dst[j] = src[j * step_];
        }
      }
    });
    return Status::ok();
  }

 private:
  const Tensor& x_;
  TaskPool* pool_;
  int64_t total_ = 0, row_ = 0, step_ = 1;
  std::vector<int64_t> offsets_;  // input offset of each output row; empty: one copy
};

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
  const Value& x = graph.value(node.inputs[0]);
  if (x.is_constant() || !x.type_known || !x.type.is_static() || x.type.dtype != DType::kFloat32)
    return unsupported("X is not a static f32 run-time value");
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> perm, read_perm(node, x.type.rank()));
  const Reduced r = reduce(x.type.shape, perm);
  if (r.dims.size() > 1 && x.type.num_elements() / r.dims[static_cast<size_t>(r.perm.back())] > kMaxRows)
    return unsupported("too many rows for the offsets table");
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  const Tensor& x = ctx.input(0);
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> perm, read_perm(ctx.node, x.shape().size()));
  return std::unique_ptr<FastOp>(new Transpose(x, ctx.output(0), reduce(x.shape(), perm), ctx.pool));
}

}  // namespace

FastOpKind transpose_kind() { return {"Transpose", false, supports, create}; }

}  // namespace hetsched::cpu::fast
