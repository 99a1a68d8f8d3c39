// MatMul of two run-time operands (attention's Q.K^T and P.V), numpy
// batched with broadcast batch dims: one task per (batch, block of 64
// output columns), which packs its panels of B and runs the GEMM
// micro-kernel down every row of A (gemm.h).
#include <algorithm>
#include <string>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/gemm.h"
#include "graph/op_schema.h"

namespace hetsched::cpu::fast {

namespace {

// Element offsets of each batch of the output into a batched operand of
// shape `shape` ([..., rows, cols]), broadcast numpy-style to `batch_dims`.
std::vector<int64_t> batch_offsets(const Shape& shape, const Shape& batch_dims) {
  const size_t rank = shape.size();
  const int64_t matrix = shape[rank - 2] * shape[rank - 1];
  const Shape own(shape.begin(), shape.end() - 2);
  // Row-major strides of the operand's batch dims, right-aligned to
  // batch_dims, 0 where the operand has 1 or lacks the dim.
  std::vector<int64_t> strides(batch_dims.size(), 0);
  int64_t stride = matrix;
  for (size_t i = own.size(); i-- > 0;) {
    if (own[i] != 1) strides[batch_dims.size() - own.size() + i] = stride;
    stride *= own[i];
  }
  int64_t batches = 1;
  for (int64_t d : batch_dims) batches *= d;
  std::vector<int64_t> offsets(static_cast<size_t>(batches), 0);
  for (int64_t b = 0; b < batches; ++b) {
    int64_t rest = b, offset = 0;
    for (size_t d = batch_dims.size(); d-- > 0;) {
      offset += rest % batch_dims[d] * strides[d];
      rest /= batch_dims[d];
    }
    offsets[static_cast<size_t>(b)] = offset;
  }
  return offsets;
}

class BatchMatMul final : public FastOp {
 public:
  BatchMatMul(const Tensor& a, const Tensor& b, Tensor& c, TaskPool* pool) : FastOp(c), a_(a), b_(b), pool_(pool) {
    const Shape& sa = a.shape();
    const Shape& sc = c.shape();
    m_ = sa[sa.size() - 2];
    k_ = sa[sa.size() - 1];
    n_ = sc[sc.size() - 1];
    const Shape batch_dims(sc.begin(), sc.end() - 2);
    a_offsets_ = batch_offsets(sa, batch_dims);
    b_offsets_ = batch_offsets(b.shape(), batch_dims);
    // Attention's heads x blocks are few tasks: 64-column blocks only where
    // they still give every thread four (gemm.h's block_columns).
    width_ = block_columns(n_, static_cast<int64_t>(a_offsets_.size()), pool ? pool->threads() : 1);
    blocks_ = (n_ + width_ - 1) / width_;
    const size_t tasks = a_offsets_.size() * static_cast<size_t>(blocks_);
    scratch_ = AlignedBuffer(tasks * static_cast<size_t>(k_ * width_) * sizeof(float));
  }

  Status run() override {
    const float* a = a_.data<float>();
    const float* b = b_.data<float>();
    float* c = out();
    float* scratch = reinterpret_cast<float*>(scratch_.data());
    const size_t tasks = a_offsets_.size() * static_cast<size_t>(blocks_);
    const double work = 2.0 * static_cast<double>(tasks) * static_cast<double>(m_ * k_ * width_);
    parallel_tasks(pool_, tasks, work, [&](size_t t) {
      const size_t batch = t / static_cast<size_t>(blocks_);
      const int64_t j0 = static_cast<int64_t>(t % static_cast<size_t>(blocks_)) * width_;
      float* panels = scratch + t * static_cast<size_t>(k_ * width_);
      for (int64_t j = j0; j < std::min(n_, j0 + width_); j += kPanel)
        pack_panel(k_, n_, b + b_offsets_[batch], n_, false, j, panels + (j - j0) * k_);
      gemm_block(m_, k_, std::min(width_, n_ - j0), a + a_offsets_[batch], k_, panels, {},
                 c + static_cast<int64_t>(batch) * m_ * n_ + j0, n_);
    });
    return Status::ok();
  }

 private:
  const Tensor& a_;
  const Tensor& b_;
  TaskPool* pool_;
  int64_t m_ = 0, k_ = 0, n_ = 0, width_ = kBlockColumns, blocks_ = 0;
  std::vector<int64_t> a_offsets_, b_offsets_;  // by output batch
  AlignedBuffer scratch_;                       // two packed panels per task
};

Status supports(const Graph& graph, const Node& node) {
  // gemm.h's plain-loop kernel is the fallback of a fallback: without AVX2
  // the portable kernels' blocked GEMM runs these products faster.
  if (std::string(gemm_isa()) == "plain") return unsupported("no AVX2: the portable GEMM is faster");
  for (ValueId v : {node.inputs[0], node.inputs[1]}) {
    const Value& value = graph.value(v);
    if (!value.type_known || value.type.dtype != DType::kFloat32 || !value.type.is_static())
      return unsupported("an operand is not a static f32 tensor");
    if (value.type.rank() < 2) return unsupported("a rank-1 operand");
  }
  if (graph.value(node.inputs[0]).is_constant()) return unsupported("A is a constant");
  const Shape& out = graph.value(node.outputs[0]).type.shape;
  if (out.size() < 2 || graph.value(node.outputs[0]).type.num_elements() == 0) return unsupported("an empty output");
  return Status::ok();
}

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  return std::unique_ptr<FastOp>(new BatchMatMul(ctx.input(0), ctx.input(1), ctx.output(0), ctx.pool));
}

}  // namespace

FastOpKind batch_matmul_kind() { return {"MatMul", false, supports, create}; }

}  // namespace hetsched::cpu::fast
