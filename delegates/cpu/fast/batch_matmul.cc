// MatMul of two run-time operands (attention's Q.K^T and P.V), numpy
// batched with broadcast batch dims: one task per (batch, block of 64
// output columns), which packs its panels of B and runs the GEMM
// micro-kernel down every row of A (gemm.h). The operands and the output
// are strided windows (strided_view.h): of the MatMul's own values, or,
// where attention_plan.h folds the layout ops around it, of the values
// before and after them.
#include <algorithm>
#include <string>
#include <vector>

#include "delegates/cpu/fast/attention_plan.h"
#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/gemm.h"
#include "graph/op_schema.h"

namespace hetsched::cpu::fast {

namespace {

// Element offsets of each batch of the output into an operand seen through
// `view` ([..., rows, cols]), broadcast numpy-style to `batch_dims`.
std::vector<int64_t> batch_offsets(const StridedView& view, const Shape& batch_dims) {
  const size_t own = view.shape.size() - 2;
  // The operand's batch strides, right-aligned to batch_dims, 0 where the
  // operand has 1 or lacks the dim.
  std::vector<int64_t> strides(batch_dims.size(), 0);
  for (size_t i = 0; i < own; ++i)
    if (view.shape[i] != 1) strides[batch_dims.size() - own + i] = view.strides[i];
  int64_t batches = 1;
  for (int64_t d : batch_dims) batches *= d;
  std::vector<int64_t> offsets(static_cast<size_t>(batches), view.offset);
  for (int64_t b = 0; b < batches; ++b) {
    int64_t rest = b;
    for (size_t d = batch_dims.size(); d-- > 0;) {
      offsets[static_cast<size_t>(b)] += rest % batch_dims[d] * strides[d];
      rest /= batch_dims[d];
    }
  }
  return offsets;
}

int64_t row_stride(const StridedView& v) { return v.strides[v.shape.size() - 2]; }
int64_t column_stride(const StridedView& v) { return v.strides[v.shape.size() - 1]; }

class BatchMatMul final : public FastOp {
 public:
  // `c` is a window of `out`'s elements (attention_plan.h); a's and b's of
  // a_root's and b_root's.
  // `mask` (may be null): added to C in the epilogue, broadcast over C's
  // batches and rows as `mask_view` (C's rank, padded with 1s) says.
  BatchMatMul(const Tensor& a_root, const StridedView& a, const Tensor& b_root, const StridedView& b, Tensor& out,
              const StridedView& c, TaskPool* pool, const Tensor* mask = nullptr, const StridedView& mask_view = {})
      : FastOp(out), a_(a_root), b_(b_root), mask_(mask), pool_(pool) {
    m_ = a.shape[a.shape.size() - 2];
    k_ = a.shape[a.shape.size() - 1];
    n_ = c.shape[c.shape.size() - 1];
    const Shape batch_dims(c.shape.begin(), c.shape.end() - 2);
    a_offsets_ = batch_offsets(a, batch_dims);
    b_offsets_ = batch_offsets(b, batch_dims);
    c_offsets_ = batch_offsets(c, batch_dims);
    lda_ = m_ == 1 ? k_ : row_stride(a);
    ldc_ = m_ == 1 ? n_ : row_stride(c);
    // B is packed from its rows, or from its columns where those are the
    // contiguous runs (K read as K^T: attention_plan.h's operand_readable).
    trans_b_ = n_ != 1 && column_stride(b) != 1;
    ldb_ = trans_b_ ? column_stride(b) : row_stride(b);
    scale_ = a.scale * b.scale * c.scale;
    if (mask_) {
      mask_offsets_ = batch_offsets(mask_view, batch_dims);
      mask_ld_ = mask_view.shape[mask_view.shape.size() - 2] == 1 ? 0 : row_stride(mask_view);
    }
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
        pack_panel(k_, n_, b + b_offsets_[batch], ldb_, trans_b_, j, panels + (j - j0) * k_, scale_);
      Epilogue e;
      if (mask_) {
        e.residual = mask_->data<float>() + mask_offsets_[batch] + j0;
        e.residual_ld = mask_ld_;
      }
      gemm_block(m_, k_, std::min(width_, n_ - j0), a + a_offsets_[batch], lda_, panels, e,
                 c + c_offsets_[batch] + j0, ldc_);
    });
    return Status::ok();
  }

 private:
  const Tensor& a_;
  const Tensor& b_;
  const Tensor* mask_;
  TaskPool* pool_;
  int64_t m_ = 0, k_ = 0, n_ = 0, width_ = kBlockColumns, blocks_ = 0;
  std::vector<int64_t> mask_offsets_;  // by output batch
  int64_t mask_ld_ = 0;                // the mask's row stride; 0: one row for all
  int64_t lda_ = 0, ldb_ = 0, ldc_ = 0;
  bool trans_b_ = false;
  float scale_ = 1.f;                                // the operands' and output's scales, applied to B's panels
  std::vector<int64_t> a_offsets_, b_offsets_, c_offsets_;  // by output batch
  AlignedBuffer scratch_;                                   // the packed panels of each task
};

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
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
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& c = ctx.output(0);
  return std::unique_ptr<FastOp>(new BatchMatMul(a, contiguous_view(ctx.node.inputs[0], a.shape()), b,
                                                 contiguous_view(ctx.node.inputs[1], b.shape()), c,
                                                 contiguous_view(ctx.node.outputs[0], c.shape()), ctx.pool));
}

}  // namespace

FastOpKind batch_matmul_kind() { return {"MatMul", false, supports, create}; }

Result<std::unique_ptr<FastOp>> make_strided_matmul(const FastOpContext& ctx, const StridedMatMul& m) {
  const Tensor* mask = nullptr;
  StridedView mask_view;
  if (m.mask != kNoValue) {
    const Value& v = ctx.graph.value(m.mask);
    mask = v.is_constant() ? v.constant.get() : &ctx.tensor_of(m.mask);
    // The mask's own row-major strides, right-aligned to C's rank.
    Shape shape(m.c.shape.size() - v.type.shape.size(), 1);
    shape.insert(shape.end(), v.type.shape.begin(), v.type.shape.end());
    mask_view = contiguous_view(m.mask, shape);
  }
  return std::unique_ptr<FastOp>(new BatchMatMul(ctx.tensor_of(m.a.root), m.a, ctx.tensor_of(m.b.root), m.b,
                                                 ctx.tensor_of(m.output), m.c, ctx.pool, mask, mask_view));
}

}  // namespace hetsched::cpu::fast
