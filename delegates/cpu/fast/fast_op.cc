#include "delegates/cpu/fast/fast_op.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

// Below this much work (flops, roughly: about 5 us on one core) a task list
// runs on the calling thread. Waking a worker costs a few microseconds, and
// on a loaded machine a worker that was descheduled costs far more: a tiny
// ViT at 2 threads ran 2x slower than at 1 with a threshold of 64K.
constexpr double kParallelWork = 1 << 20;

const std::vector<FastOpKind>& kinds() {
  static const std::vector<FastOpKind> table{batch_matmul_kind(), layer_norm_kind(), gelu_kind(), erf_kind(), softmax_kind(), where_kind(),
                                                 transpose_kind(), depthwise_conv_kind(), winograd_conv_kind(),
                                             dense_conv_kind(), pointwise_conv_kind(), resize_kind(), conv_nd_kind(),
                                             rnn_kind(), gru_kind(), lstm_kind()};
  return table;
}

// The first kind for `node`'s op that supports it; for an op no kind
// supports, the first one for the op (whose reason is reported), or nullptr.
const FastOpKind* find_kind(const Graph& graph, const Node& node, int threads) {
  const FastOpKind* first = nullptr;
  for (const FastOpKind& k : kinds()) {
    if (node.op != k.op) continue;
    if (!first) first = &k;
    if (k.supports(graph, node, threads).is_ok()) return &k;
  }
  return first;
}

// HETSCHED_FAST_ISA=avx2 or =baseline caps the instruction set the fast
// kernels use (tests run them so, to check the builds this CPU would not
// pick); unset, the CPU decides.
bool isa_allowed(const char* isa) {
  static const char* cap = std::getenv("HETSCHED_FAST_ISA");
  if (!cap) return true;
  const std::string c = cap;
  return c == "baseline" ? false : c == "avx2" ? std::string(isa) == "avx2" : true;
}

}  // namespace

bool cpu_has_avx2_fma() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = isa_allowed("avx2") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512f() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = isa_allowed("avx512f") && cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

const Tensor& FastOpContext::input(size_t i) const {
  const Value& v = graph.value(node.inputs[i]);
  return v.is_constant() ? *v.constant : tensor_of(node.inputs[i]);
}

int FastOpContext::threads() const { return pool ? pool->threads() : 1; }

Status fast_op_supports(const Graph& graph, const Node& node, int threads) {
  const FastOpKind* kind = find_kind(graph, node, threads);
  if (!kind) return unsupported("op " + node.op + " has no fast kernel");
  for (ValueId v : node.outputs)
    if (v != kNoValue && (!graph.value(v).type_known || !graph.value(v).type.is_static()))
      return unsupported("an output has no static shape");
  return kind->supports(graph, node, threads);
}

bool fast_op_beats_lone_segment(const Graph& graph, const Node& node, int threads) {
  const FastOpKind* kind = find_kind(graph, node, threads);
  return kind && kind->beats_lone_segment && fast_op_supports(graph, node, threads).is_ok();
}

Result<std::unique_ptr<FastOp>> make_fast_op(const FastOpContext& ctx) {
  const FastOpKind* kind = find_kind(ctx.graph, ctx.node, ctx.threads());
  if (!kind) return unsupported("op " + ctx.node.op + " has no fast kernel");
  return kind->create(ctx);
}

double parallel_work_threshold() { return kParallelWork; }

bool worth_splitting(const TaskPool* pool, size_t tasks, double work) {
  return pool && tasks >= 2 && work >= kParallelWork && pool->threads() >= 2;
}

}  // namespace hetsched::cpu::fast
