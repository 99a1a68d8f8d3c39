// Where(cond, X, Y) on f32 with numpy broadcasting (a causal mask filling
// attention scores): each row's input offsets computed once at init, and
// the row loop built for each operand's step (0: broadcast along the row,
// 1: contiguous), so it vectorises; the portable kernel walks the
// broadcast index per row and reads with run-time strides.
#include <array>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/op_schema.h"

namespace hetsched::cpu::fast {

namespace {

using RowFn = void (*)(const uint8_t*, const float*, const float*, float*, int64_t);

// Both sides loaded, then selected: a load under the condition would keep
// GCC from vectorising the loop.
template <bool C, bool X, bool Y>
void select_row(const uint8_t* c, const float* x, const float* y, float* out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float a = x[X ? j : 0];
    const float b = y[Y ? j : 0];
    out[j] = c[C ? j : 0] ? a : b;
  }
}

// By (cond step << 2 | x step << 1 | y step).
constexpr std::array<RowFn, 8> kRows{select_row<false, false, false>, select_row<false, false, true>,
                                     select_row<false, true, false>,  select_row<false, true, true>,
                                     select_row<true, false, false>,  select_row<true, false, true>,
                                     select_row<true, true, false>,   select_row<true, true, true>};

class Where final : public FastOp {
 public:
  Where(const Tensor& c, const Tensor& x, const Tensor& y, Tensor& out, TaskPool* pool)
      : FastOp(out), c_(c), x_(x), y_(y), pool_(pool) {
    const Shape& shape = out.shape();
    const size_t rank = shape.size();
    length_ = rank == 0 ? 1 : shape.back();
    const int64_t rows = length_ == 0 ? 0 : out.num_elements() / length_;
    const std::array<const Tensor*, 3> ins{&c, &x, &y};
    std::array<std::vector<int64_t>, 3> strides;
    int index = 0;
    for (size_t k = 0; k < 3; ++k) {
      strides[k] = broadcast_strides(ins[k]->shape(), shape);
      const bool step = rank > 0 && strides[k].back() == 1;
      index = index << 1 | (step ? 1 : 0);
    }
    row_ = kRows[static_cast<size_t>(index)];
    offsets_.resize(static_cast<size_t>(rows) * 3);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t rest = r;
      for (size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
        const int64_t idx = rest % shape[d];
        rest /= shape[d];
        for (size_t k = 0; k < 3; ++k) offsets_[static_cast<size_t>(r) * 3 + k] += idx * strides[k][d];
      }
    }
  }

  Status run() override {
    const uint8_t* c = c_.data<uint8_t>();
    const float* x = x_.data<float>();
    const float* y = y_.data<float>();
    float* out = this->out();
    const size_t rows = offsets_.size() / 3;
    parallel_tasks(pool_, rows, 2.0 * static_cast<double>(rows) * static_cast<double>(length_), [&](size_t r) {
      const int64_t* o = offsets_.data() + r * 3;
      row_(c + o[0], x + o[1], y + o[2], out + static_cast<int64_t>(r) * length_, length_);
    });
    return Status::ok();
  }

 private:
  const Tensor& c_;
  const Tensor& x_;
  const Tensor& y_;
  TaskPool* pool_;
  int64_t length_ = 1;
  RowFn row_ = nullptr;
  std::vector<int64_t> offsets_;  // cond, X, Y offsets of each output row
};

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
  if (node.inputs.size() != 3) return unsupported("not three inputs");
  const Value& c = graph.value(node.inputs[0]);
  if (c.type.dtype != DType::kBool) return unsupported("cond is not bool");
  for (size_t i = 1; i < 3; ++i)
    if (graph.value(node.inputs[i]).type.dtype != DType::kFloat32) return unsupported("X or Y is not f32");
  for (ValueId v : node.inputs)
    if (!graph.value(v).type_known || !graph.value(v).type.is_static()) return unsupported("a dynamic input");
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  return std::unique_ptr<FastOp>(new Where(ctx.input(0), ctx.input(1), ctx.input(2), ctx.output(0), ctx.pool));
}

}  // namespace

FastOpKind where_kind() { return {"Where", false, supports, create}; }

}  // namespace hetsched::cpu::fast
