#include "delegates/cpu/fast/linear.h"

#include <algorithm>
#include <string>

#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/strided_view.h"
#include "delegates/cpu/fast/vector_math.h"
#include "delegates/cpu/xnnpack/op_params.h"

namespace hetsched::cpu::fast {

namespace {

constexpr int64_t kMinRows = 16;
// Rows of C per task when a task covers only some of them: a multiple of
// the AVX-512 kernels' 6 and 12.
constexpr int64_t kTaskRows = 96;
// Up to this many rows, and when there are enough column blocks to keep
// every thread busy, a task runs every row of its block: the weights, often
// bigger than the L2 (BERT-base's FF layer: 9.4 MB), stream from memory
// once instead of once per row band (96 rows, then 32 of a 128-token
// sequence).
constexpr int64_t kMaxTaskRows = 512;
constexpr int64_t kBlocksPerThread = 4;

// The one node reading `v` when it is an Add and `v` is no graph output.
NodeId sole_add_reader(const Graph& graph, ValueId v) {
  if (graph.is_output(v)) return kNoNode;
  const std::vector<NodeId> readers = graph.consumers(v);
  if (readers.size() != 1) return kNoNode;
  const Node& add = graph.node(readers[0]);
  if (add.op != "Add" || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return kNoNode;
  if (!(graph.value(add.outputs[0]).type == graph.value(v).type)) return kNoNode;
  return readers[0];
}

ValueId other_input(const Node& add, ValueId v) { return add.inputs[0] == v ? add.inputs[1] : add.inputs[0]; }

// The nodes after `v` that keep its elements in place, each the one reader
// of the value before it (no graph output in between), and the value the
// last one writes (`v` when there are none).
std::pair<std::vector<NodeId>, ValueId> element_preserving_chain(const Graph& graph, ValueId v) {
  std::vector<NodeId> chain;
  while (!graph.is_output(v)) {
    const std::vector<NodeId> readers = graph.consumers(v);
    if (readers.size() != 1) break;
    const Node& node = graph.node(readers[0]);
    if (data_input(graph, node) != v || !keeps_elements_in_place(graph, node)) break;
    chain.push_back(readers[0]);
    v = node.outputs[0];
  }
  return {chain, v};
}

// A constant of n f32 values that broadcasts along the last axis only.
bool is_row_bias(const Graph& graph, ValueId v, int64_t n) {
  const Value& value = graph.value(v);
  if (!value.is_constant() || value.type.dtype != DType::kFloat32 || value.type.num_elements() != n) return false;
  const Shape& s = value.type.shape;
  return s.empty() ? n == 1 : s.back() == n;
}

class Linear final : public FastOp {
 public:
  Linear(const Tensor& a, Tensor& c, const Tensor* residual, int64_t k, int64_t n, const std::vector<float>& filter,
         std::vector<float> bias, TaskPool* pool)
      : FastOp(c), a_(a), residual_(residual), k_(k), n_(n), bias_(std::move(bias)), pool_(pool) {
    m_ = a.num_elements() / k;
    const int64_t threads = pool ? pool->threads() : 1;
    // 64-column blocks where they keep every thread busy; 32 at many
    // threads (BERT-base's 3072-column FF layer at 16 threads in 64-column
    // blocks split its rows too, reading its weights twice: 17.9 -> 19.1 ms
    // on the H100 machine's Xeon).
    width_ = block_columns(n, 1, static_cast<int>(threads));
    blocks_ = (n + width_ - 1) / width_;
    task_rows_ = m_ <= kMaxTaskRows && blocks_ >= kBlocksPerThread * threads ? m_ : kTaskRows;
    const size_t tasks = static_cast<size_t>(blocks_ * ((m_ + task_rows_ - 1) / task_rows_));
    next_block_ = worth_splitting(pool, tasks, work()) ? threads : 1;
    panels_ = AlignedBuffer(static_cast<size_t>(blocks_ * k * width_) * sizeof(float));
    float* panels = reinterpret_cast<float*>(panels_.data());
    for (int64_t j = 0; j < n; j += kPanel) pack_panel(k, n, filter.data(), k, true, j, panels + j * k);
  }

  Status run() override {
    const float* a = a_.data<float>();
    const float* panels = reinterpret_cast<const float*>(panels_.data());
    const float* residual = residual_ ? residual_->data<float>() : nullptr;
    float* c = out();
    const int64_t row_tasks = (m_ + task_rows_ - 1) / task_rows_;
    const size_t tasks = static_cast<size_t>(blocks_ * row_tasks);
    parallel_tasks(pool_, tasks, work(), [&](size_t t) {
      const int64_t j0 = static_cast<int64_t>(t) % blocks_ * width_;
      const int64_t i0 = static_cast<int64_t>(t) / blocks_ * task_rows_;
      // The block this thread likely takes next (tasks go out in order).
      const int64_t next = j0 + next_block_ * width_;
      const Epilogue e{bias_.data() + j0, residual ? residual + i0 * n_ + j0 : nullptr,
                       i0 == 0 && next < n_ ? panels + next * k_ : nullptr};
      gemm_block(std::min(task_rows_, m_ - i0), k_, std::min(width_, n_ - j0), a + i0 * k_, k_,
                 panels + j0 * k_, e, c + i0 * n_ + j0, n_);
    });
    return Status::ok();
  }

 private:
  const Tensor& a_;
  const Tensor* residual_;
  double work() const { return 2.0 * static_cast<double>(m_ * n_ * k_); }

  int64_t m_ = 0, k_, n_, width_ = kBlockColumns, blocks_ = 0, task_rows_ = kTaskRows;
  int64_t next_block_ = 1;  // how many blocks ahead a task's prefetch reads: the threads splitting them
  std::vector<float> bias_;  // the layer's own and the folded Add's, summed
  AlignedBuffer panels_;     // the weights, packed once (gemm.h)
  TaskPool* pool_;
};

}  // namespace

std::vector<NodeId> LinearGroup::nodes() const {
  std::vector<NodeId> n{matmul};
  if (bias_add != kNoNode) n.push_back(bias_add);
  n.insert(n.end(), views.begin(), views.end());
  if (residual_add != kNoNode) n.push_back(residual_add);
  return n;
}

std::vector<LinearGroup> find_linear_groups(const Graph& graph) {
  std::vector<LinearGroup> groups;
  if (std::string(gemm_isa()) == "plain") return groups;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& node = graph.node(id);
    if (node.op != "MatMul" && node.op != "Gemm") continue;
    const Value& a = graph.value(node.inputs[0]);
    const Value& y = graph.value(node.outputs[0]);
    if (a.is_constant() || !a.type_known || !y.type_known || a.type.dtype != DType::kFloat32 ||
        !a.type.is_static() || !y.type.is_static() || a.type.rank() < 2)
      continue;
    const Result<xnnpack::FullyConnectedParams> p = xnnpack::read_fully_connected(graph, node);
    if (!p.is_ok() || a.type.num_elements() / p->input_channels < kMinRows) continue;
    LinearGroup g;
    g.matmul = id;
    g.output = node.outputs[0];
    if (const NodeId add = sole_add_reader(graph, g.output);
        add != kNoNode && is_row_bias(graph, other_input(graph.node(add), g.output), p->output_channels)) {
      g.bias_add = add;
      g.output = graph.node(add).outputs[0];
    }
    // The residual must exist when the group runs, at the matmul's place.
    const auto [views, viewed] = element_preserving_chain(graph, g.output);
    if (const NodeId add = sole_add_reader(graph, viewed); add != kNoNode) {
      const ValueId r = other_input(graph.node(add), viewed);
      const Value& rv = graph.value(r);
      if (!rv.is_constant() && rv.type == graph.value(viewed).type && (rv.producer == kNoNode || rv.producer < id)) {
        g.views = views;
        g.residual_add = add;
        g.residual = r;
        g.output = graph.node(add).outputs[0];
      }
    }
    groups.push_back(g);
  }
  return groups;
}

std::map<NodeId, std::string> linear_keep_out(const std::vector<LinearGroup>& groups) {
  std::map<NodeId, std::string> keep_out;
  for (const LinearGroup& g : groups)
    for (NodeId n : g.nodes()) keep_out[n] = "part of a linear layer on the fast GEMM";
  return keep_out;
}

Result<std::unique_ptr<FastOp>> make_linear(const FastOpContext& ctx, const LinearGroup& group) {
  HS_ASSIGN_OR_RETURN(const xnnpack::FullyConnectedParams p, xnnpack::read_fully_connected(ctx.graph, ctx.node));
  std::vector<float> bias = p.bias;
  bias.resize(static_cast<size_t>(p.output_channels), 0.f);
  if (group.bias_add != kNoNode) {
    const Node& add = ctx.graph.node(group.bias_add);
    const Tensor& b = *ctx.graph.value(other_input(add, ctx.node.outputs[0])).constant;
    const float* values = b.data<float>();
    for (int64_t j = 0; j < p.output_channels; ++j) bias[static_cast<size_t>(j)] += values[j];
  }
  const Tensor* residual = group.residual == kNoValue ? nullptr : &ctx.tensor_of(group.residual);
  return std::unique_ptr<FastOp>(new Linear(ctx.input(0), ctx.tensor_of(group.output), residual, p.input_channels,
                                            p.output_channels, p.filter, std::move(bias), ctx.pool));
}

}  // namespace hetsched::cpu::fast
