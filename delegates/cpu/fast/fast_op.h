// Fast kernels: vectorised f32 kernels for the ops of transformer blocks
// that this XNNPACK snapshot (Debian's, 2022) lacks — batched MatMul of two
// run-time operands, LayerNormalization, Gelu, Erf, Where, Transpose — or runs slower
// (Softmax alone in a segment; linear layers on AVX-512, linear.h;
// depthwise convs of kernel sizes it has no micro-kernel for; convs of 3
// or more spatial dims, which it has no operator for: conv_nd.cc; dense 3x3
// stride-1 convs, by Winograd: winograd_conv.cc; 1x1 convs on the fast
// GEMM with the residual Add fused: pointwise_conv.cc; RNN, GRU and LSTM,
// recurrent.cc), so that
// they do not fall back to the portable kernels, which are written to be
// the oracle (double accumulation, plain loops) and cost 5-15x more.
//
// A fast op runs between XNNPACK segments like a portable node: on the
// island's tensors in the graph's order (the Winograd conv also on NHWC
// ones, as an NHWC step between segments), on the delegate's TaskPool
// (task_pool.h; split only when the work pays for waking the other
// threads), with every buffer it needs allocated at init. The CPU delegate uses them with engine
// xnnpack for the nodes XNNPACK does not take; engine portable keeps the
// reference kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "delegates/cpu/fast/task_pool.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched::cpu::fast {

class ActivationPass;  // activation_pass.h

// One node ready to run. Every fast op has one f32 output, which write_to
// may redirect; the recurrent ops also write their Y_h and Y_c, if used,
// to those tensors.
class FastOp {
 public:
  explicit FastOp(Tensor& output) : out_(output.data<float>()) {}
  virtual ~FastOp() = default;
  // One call at a time; reads the inputs' tensors, writes the output.
  virtual Status run() = 0;
  // Writes the output to `dst` (as many bytes as the output tensor) instead
  // of its tensor: the staging buffer of the one segment reading it
  // (Segment::adopt_input), which then skips its copy.
  void write_to(float* dst) { out_ = dst; }
  // Writes the output (NHWC) into every pixel of a wider NHWC tensor
  // instead, its channels from `dst` on, pixels `pixel_stride` floats
  // apart: an NHWC Concat's output, which then skips the copy
  // (cpu_delegate.cc, island_arena.h's concat_input_in_place). False where
  // the op cannot (its output stays where it was): convs on the fast GEMM
  // (not tap by tap, without a residual) and Winograd convs can.
  virtual bool write_channels_into(float* dst, int64_t pixel_stride) { return false; }

 protected:
  float* out() const { return out_; }

 private:
  float* out_;
};

// What an op is made from. `tensor_of` gives the island's tensor of a
// non-constant value; its address stays fixed while the op lives.
struct FastOpContext {
  const Graph& graph;
  const Node& node;
  TaskPool* pool;  // not owned; may be nullptr (the calling thread)
  std::function<Tensor&(ValueId)> tensor_of;
  // The node's rank-4 input and output hold NHWC data in their tensors
  // (an NHWC step between XNNPACK segments, xnnpack/segment_plan.h): only
  // for the convs whose kernels read and write NHWC (Winograd, the fast
  // GEMM's, depthwise, fast_plan.cc).
  bool nhwc = false;
  // With nhwc: the node's input 0 is an island input, which stays in the
  // caller's NCHW order (xnnpack::is_island_input; only for the convs of
  // dense_conv_reads_windows(), a network's stem).
  bool nchw_input = false;
  // With nhwc: the node's output is an island output, written in the
  // graph's order (only for a Resize: fast_plan.h's lone segments).
  bool nchw_output = false;

  // The island's tensor of an input, or its constant.
  const Tensor& input(size_t i) const;
  Tensor& output(size_t i) const { return tensor_of(node.outputs[i]); }
  // The threads the op runs on: the plan chose its kernel for these.
  int threads() const;
};

// ok when `node` has a fast kernel here at `threads` threads (the rules
// choosing between a conv's kernels count them); kUnsupported with the
// reason otherwise (the node then runs on its portable kernel).
Status fast_op_supports(const Graph& graph, const Node& node, int threads);

// Whether `node`'s fast kernel costs less than an XNNPACK segment of that
// node alone (staging copy and dispatch included), so that a lone node
// XNNPACK covers should run here instead. False where XNNPACK's kernel has
// what the fast one lacks (a Gemm's weights packed once).
bool fast_op_beats_lone_segment(const Graph& graph, const Node& node, int threads);

// Needs fast_op_supports() to have passed at ctx.threads().
Result<std::unique_ptr<FastOp>> make_fast_op(const FastOpContext& ctx);

// Whether [0, tasks) with `work` in all (in the caller's units, ~1 per
// flop) is worth splitting over `pool`: waking a sleeping worker costs a few
// microseconds, more than many of a transformer block's ops take.
bool worth_splitting(const TaskPool* pool, size_t tasks, double work);
// The work below which nothing is split (for XNNPACK segments too).
double parallel_work_threshold();

// Runs task(i) for i in [0, tasks): over `pool` when worth_splitting(),
// else on this thread. A template, not std::function: a capturing lambda
// in a std::function would allocate on every run.
template <typename Task>
void parallel_tasks(TaskPool* pool, size_t tasks, double work, const Task& task) {
  if (!worth_splitting(pool, tasks, work)) {
    for (size_t i = 0; i < tasks; ++i) task(i);
    return;
  }
  pool->run(
      tasks, [](void* context, size_t i) { (*static_cast<const Task*>(context))(i); }, const_cast<Task*>(&task));
}

// The ops of each file, for fast_op.cc's table.
struct FastOpKind {
  const char* op;
  bool beats_lone_segment;  // see fast_op_beats_lone_segment()
  Status (*supports)(const Graph& graph, const Node& node, int threads);
  Result<std::unique_ptr<FastOp>> (*create)(const FastOpContext& ctx);
};
FastOpKind batch_matmul_kind();  // batch_matmul.cc
FastOpKind layer_norm_kind();    // layer_norm.cc
FastOpKind gelu_kind();          // gelu.cc
FastOpKind erf_kind();           // gelu.cc
FastOpKind softmax_kind();       // softmax.cc
FastOpKind where_kind();         // where.cc
FastOpKind transpose_kind();     // transpose.cc
FastOpKind depthwise_conv_kind();  // depthwise_conv.cc
FastOpKind winograd_conv_kind();   // winograd_conv.cc
FastOpKind pointwise_conv_kind();  // pointwise_conv.cc (a 1x1 conv alone; groups: pointwise_conv.h)
FastOpKind dense_conv_kind();      // pointwise_conv.cc (a dense KxK conv on the GEMM)
FastOpKind resize_kind();          // resize.cc (nearest and linear, in the graph's order)
FastOpKind conv_nd_kind();         // conv_nd.cc (3 or more spatial dims, in the graph's order)
FastOpKind rnn_kind();             // recurrent.cc (RNN, GRU and LSTM with constant weights)
FastOpKind gru_kind();
FastOpKind lstm_kind();

// Whether `node` is a depthwise Conv that leaves XNNPACK for its fast
// kernel: one this XNNPACK has no depthwise micro-kernel for (it would run
// it as a grouped GEMM of one channel per group). depthwise_conv.cc.
bool depthwise_conv_leaves_xnnpack(const Graph& graph, const Node& node);

// Whether `node` is a dense 3x3 stride-1 Conv that leaves XNNPACK for
// Winograd F(4x4, 3x3) or F(2x2, 3x3) (winograd_conv.cc): HETSCHED_WINOGRAD and, unset,
// winograd_rule.h's rule decide. Its kernel reads and writes NHWC as well
// as the graph's order, so it runs as an NHWC step between segments.
bool winograd_conv_leaves_xnnpack(const Graph& graph, const Node& node, int threads);

// The Winograd op for ctx.node writing `output` (the node's own output, or
// that of the SiLU its epilogue takes in, or of the residual Add after
// that), with `post` after the sums instead of the node's fused activation
// when not empty, and `residual` added after them where given.
Result<std::unique_ptr<FastOp>> make_winograd(const FastOpContext& ctx, ValueId output, const ActivationPass& post,
                                              const Tensor* residual = nullptr);

// Whether `node` is a 1x1 Conv that leaves XNNPACK for the fast GEMM
// (pointwise_conv.h) at `threads` (pointwise_rule.h). Its kernel reads and
// writes NHWC too.
bool pointwise_conv_leaves_xnnpack(const Graph& graph, const Node& node, int threads = 1);

// Whether `node` is a dense KxK Conv (group 1, not 1x1, not one Winograd
// takes) that leaves XNNPACK for the fast GEMM, its windows read in place or gathered into
// the GEMM's A (pointwise_conv.cc): HETSCHED_DENSE_CONV and, unset,
// dense_conv_rule.h decide. Reads and writes NHWC as well as the graph's
// order, so it runs as an NHWC step between segments. `threads`: the
// island's (the stem kernel's shapes leave only up to kMaxNarrowThreads).
bool dense_conv_leaves_xnnpack(const Graph& graph, const Node& node, int threads = 1);

// Whether that conv's NHWC kernel reads its windows in place (no dilation
// in width; HETSCHED_CONV_WINDOWS not off), and so can also read an island
// input in the caller's NCHW order, copying it into its zero-bordered NHWC
// image (a network's stem: xnnpack::plan_engine's nchw_input_kernels).
bool dense_conv_reads_windows(const Graph& graph, const Node& node, int threads = 1);

}  // namespace hetsched::cpu::fast
