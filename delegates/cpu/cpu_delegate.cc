#include "delegates/cpu/cpu_delegate.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/fast_plan.h"
#include "delegates/cpu/fast/rule_choice.h"
#include "delegates/cpu/island_arena.h"
#include "delegates/cpu/kernel.h"
#include "delegates/cpu/thread_pool.h"
#include "delegates/cpu/xnnpack/coverage.h"
#include "delegates/cpu/xnnpack/layout_convert.h"
#include "delegates/cpu/xnnpack/nhwc_ops.h"
#include "delegates/cpu/xnnpack/segment.h"
#include "delegates/cpu/xnnpack/segment_plan.h"
#include "delegates/cpu/xnnpack/threadpool.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"
#include "graph/graph_serialize.h"
#include "graph/passes/concat_of_slices.h"
#include "graph/passes/fuse_channel_shuffle.h"
#include "graph/passes/fuse_gelu.h"
#include "graph/op_schema.h"
#include "graph/subgraph.h"

namespace hetsched::cpu {
namespace {

enum class CpuEngine { kXnnpack, kPortable };

// One node ready to run: its kernel and the tensors it reads and writes.
struct PreparedNode {
  const Node* node;
  const KernelFn* kernel;
  std::vector<const Tensor*> inputs;
  std::vector<Tensor*> outputs;
};

// One step of a run: a portable node, an XNNPACK segment, a node on its
// NHWC kernel between segments, or a node on its fast kernel (fast/).
struct Step {
  PreparedNode portable{};
  std::unique_ptr<xnnpack::Segment> segment;
  std::unique_ptr<xnnpack::NhwcNode> nhwc;
  std::unique_ptr<fast::FastOp> fast;
  std::vector<NodeId> nodes;  // what it runs, for profile_ops
};

const char* step_kind(const Step& step) {
  return step.segment ? "xnnpack" : step.nhwc ? "nhwc" : step.fast ? "fast" : "portable";
}

// Gives the delegate's one thread pool (thread_pool.h): XNNPACK's runtimes,
// the fast kernels, the portable kernels and the island's edge copies all
// split their loops over it.
using ThreadpoolSource = std::function<Result<xnnpack::Threadpool>()>;

class CpuIslandHandle final : public IslandHandle {
 public:
  static Result<std::unique_ptr<IslandHandle>> create(Graph graph, CpuEngine engine, int island_id,
                                                      bool profile_ops, const ThreadpoolSource& threadpool) {
    auto handle = std::unique_ptr<CpuIslandHandle>(new CpuIslandHandle(std::move(graph), island_id));
    handle->profile_ops_ = profile_ops;
    HS_RETURN_IF_ERROR(handle->prepare(engine, threadpool));
    return std::unique_ptr<IslandHandle>(std::move(handle));
  }

  Status execute(ExecContext& ctx, std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) override {
    const auto& gin = graph_.inputs();
    const auto& gout = graph_.outputs();
    if (inputs.size() != gin.size() || outputs.size() != gout.size())
      return invalid_argument("failed to execute cpu island " + std::to_string(island_id_) + ": expected " +
                              std::to_string(gin.size()) + " inputs and " + std::to_string(gout.size()) +
                              " outputs, got " + std::to_string(inputs.size()) + " and " +
                              std::to_string(outputs.size()));
    // Island edges: inputs read only by XNNPACK segments go straight from
    // the caller's bytes into the segments' staging; the rest, and the
    // outputs, are copied on the thread pool (one core streams a few GB/s:
    // a 6 MiB edge cost ~1 ms on one thread of the H100 machine's Xeon).
    for (size_t i = 0; i < gin.size(); ++i) {
      if (!direct_readers_[i].empty()) {
        for (xnnpack::Segment* s : direct_readers_[i]) s->read_input_from(gin[i], inputs[i].host);
        continue;
      }
      Tensor& t = tensors_.at(gin[i]);
      fast::parallel_copy(inputs[i].host, t.raw(), t.byte_size(), pool_);
    }
    Status status;
    std::vector<OpTiming>* timings = profile_ops_ ? ctx.op_timings : nullptr;
    {
      // The portable kernels split their loops over the pool too.
      const ScopedCurrentPool on_pool(pool_);
      const auto first = std::chrono::steady_clock::now();
      for (Step& step : steps_) {
        const auto t0 = timings ? std::chrono::steady_clock::now() : first;
        if (step.segment) {
          status = step.segment->run();
        } else if (step.nhwc) {
          status = step.nhwc->run();
        } else if (step.fast) {
          status = step.fast->run();
        } else {
          const PreparedNode& p = step.portable;
          KernelContext kc{*p.node, p.inputs, p.outputs, graph_.opset()};
          status = (*p.kernel)(kc);
        }
        if (!status.is_ok()) break;
        if (timings) record_timing(step, first, t0, *timings);
      }
    }
    HS_RETURN_IF_ERROR(status);
    for (size_t i = 0; i < gout.size(); ++i) {
      const Tensor& t = value_tensor(gout[i]);
      fast::parallel_copy(t.raw(), outputs[i].host, t.byte_size(), pool_);
    }
    spdlog::debug("[CPU] execute: island {}, {} ops", island_id_, graph_.num_nodes());
    return Status::ok();
  }

  const CpuEngineCoverage& coverage() const { return coverage_; }
  const ThreadPool* pool() const { return pool_; }

 private:
  using Clock = std::chrono::steady_clock;
  void record_timing(const Step& step, Clock::time_point first, Clock::time_point t0,
                     std::vector<OpTiming>& timings) const {
    const auto t1 = Clock::now();
    OpTiming t;
    for (NodeId n : step.nodes) {
      t.nodes.push_back(graph_.node(n).name);
      t.ops.push_back(graph_.node(n).op);
    }
    t.kind = step_kind(step);
    t.start_ms = std::chrono::duration<double, std::milli>(t0 - first).count();
    t.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    timings.push_back(std::move(t));
  }

  CpuIslandHandle(Graph graph, int island_id) : graph_(std::move(graph)), island_id_(island_id) {}

  // Plans the island's steps (xnnpack/segment_plan.h), creates an XNNPACK
  // runtime per segment and binds each portable node to its kernel, so
  // execute() does no lookups or allocations. A segment XNNPACK will not
  // take runs on the portable kernels instead, with a warning.
  Status prepare(CpuEngine engine, const ThreadpoolSource& threadpool) {
    for (ValueId v : graph_.inputs()) tensor(v);
    for (ValueId v : graph_.outputs())
      if (!graph_.value(v).is_constant()) tensor(v);

    // The pool first: the plan's rules weigh the thread count.
    auto pool = threadpool();
    if (pool.is_ok()) {
      threadpool_ = std::move(pool).value();
      pool_ = xnnpack::thread_pool_of(threadpool_.get());
    } else {
      spdlog::warn("[CPU] island {}: no thread pool, running on the calling thread alone: {}", island_id_,
                   pool.status().message());
    }
    fast::FastPlan fast_plan;  // nothing on fast kernels with engine portable or without XNNPACK
    xnnpack::EnginePlan plan = plan_for(engine, fast_plan);
    const std::vector<bool>& on_fast = fast_plan.on_fast_kernel;
    if (engine == CpuEngine::kXnnpack) HS_RETURN_IF_ERROR(place_in_arena(plan, fast_plan));

    const auto tensor_of = [this](ValueId v) -> Tensor& { return tensor(v); };
    std::vector<Result<std::unique_ptr<xnnpack::Segment>>> segments = create_segments(plan, tensor_of);
    bool any_failed = false;
    for (size_t i = 0; i < plan.steps.size(); ++i)
      any_failed = any_failed || (plan.steps[i].xnnpack && !segments[i].is_ok());
    if (any_failed && xnnpack::drop_nhwc_steps(plan)) {
      // Values kept NHWC assume every segment around them runs on XNNPACK;
      // the arena's views of them (layout views) go with them.
      segments.clear();
      if (engine == CpuEngine::kXnnpack) {
        forget_arena();
        HS_RETURN_IF_ERROR(place_in_arena(plan, fast_plan));
      }
      segments = create_segments(plan, tensor_of);
    }
    std::vector<int> step_of(graph_.num_nodes(), -1);
    for (size_t i = 0; i < plan.steps.size(); ++i)
      for (NodeId n : plan.steps[i].nodes) step_of[n] = static_cast<int>(i);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const xnnpack::EngineStep& step = plan.steps[i];
      if (step.xnnpack) {
        auto& segment = segments[i];
        if (segment.is_ok()) {
          steps_.push_back(Step{{}, std::move(segment).value(), nullptr, nullptr, step.nodes});
          coverage_.xnnpack_ops += static_cast<int>(step.nodes.size());
          ++coverage_.xnnpack_segments;
          continue;
        }
        spdlog::warn("[CPU] island {}: failed to create an XNNPACK runtime for {} ops, running them on the portable "
                     "kernels: {}",
                     island_id_, step.nodes.size(), segment.status().message());
      }
      if (step.nhwc) {
        // The plan only makes NHWC steps between segments, so the thread
        // pool exists; the node's values are NHWC and have no other reader.
        const Node& nhwc_node = graph_.node(step.nodes[0]);
        HS_ASSIGN_OR_RETURN(const bool grouped, add_group(fast_plan, step.nodes[0], true, i, plan, segments, step_of, tensor_of));
        if (grouped) continue;
        if (on_fast[step.nodes[0]]) {
          fast::FastOpContext fctx{graph_, nhwc_node, pool_, tensor_of};
          fctx.nhwc = true;
          fctx.nchw_input = reads_island_input(nhwc_node);
          fctx.nchw_output = step.nchw_output;
          HS_ASSIGN_OR_RETURN(auto op, fast::make_fast_op(fctx));
          add_fast_step(std::move(op), {step.nodes[0]}, nhwc_node.outputs[0], i, plan, segments, step_of);
          spdlog::debug("[CPU] island {}: {} runs on its fast NHWC kernel between segments", island_id_,
                        graph_.describe_node(step.nodes[0]));
          continue;
        }
        HS_ASSIGN_OR_RETURN(auto node, xnnpack::NhwcNode::create(graph_, nhwc_node, threadpool_.get(), tensor_of));
        if (nhwc_node.outputs.size() == 1)
          if (float* staging = sole_reader_staging(nhwc_node.outputs[0], i, plan, segments, step_of))
            node->write_to(staging);
        if (nhwc_node.op == "Concat") write_concat_inputs_in_place(nhwc_node, *node);
        steps_.push_back(Step{{}, nullptr, std::move(node), nullptr, {step.nodes[0]}});
        ++coverage_.portable_ops;
        spdlog::debug("[CPU] island {}: {} runs on its NHWC kernel between segments", island_id_,
                      graph_.describe_node(step.nodes[0]));
        continue;
      }
      for (NodeId n : step.nodes) {
        HS_ASSIGN_OR_RETURN(const bool grouped, add_group(fast_plan, n, false, i, plan, segments, step_of, tensor_of));
        if (grouped) continue;
        // Its output is its input's bytes (a Transpose too, that has a fast kernel).
        if (view_nodes_.count(n)) {
          ++coverage_.portable_ops;
          continue;
        }
        if (on_fast[n]) {
          HS_ASSIGN_OR_RETURN(auto op, fast::make_fast_op({graph_, graph_.node(n), pool_, tensor_of}));
          add_fast_step(std::move(op), {n}, graph_.node(n).outputs[0], i, plan, segments, step_of);
          continue;
        }
        ++coverage_.portable_ops;
        HS_ASSIGN_OR_RETURN(PreparedNode p, prepare_portable(graph_.node(n)));
        steps_.push_back(Step{std::move(p), nullptr, nullptr, nullptr, {n}});
      }
    }
    find_direct_readers();
    // A transformer island can run wholly on fast kernels (attention's layout
    // ops read through, attention_plan.h): that is the xnnpack engine's plan too.
    coverage_.engine = coverage_.xnnpack_segments > 0 || coverage_.fast_ops > 0 ? "xnnpack" : "portable";
    spdlog::debug("[CPU] init: island {}, {} ops: {} on xnnpack in {} segment(s), {} portable", island_id_,
                  graph_.num_nodes(), coverage_.xnnpack_ops, coverage_.xnnpack_segments, coverage_.portable_ops);
    if (engine == CpuEngine::kXnnpack)
      for (const xnnpack::PortableReason& r : plan.portable)
        spdlog::debug("[CPU] island {}: {} on portable: {}", island_id_, graph_.describe_node(r.node), r.reason);
    return Status::ok();
  }

  // Node `n` when some fused group of `fast_plan` holds it: nothing where
  // it runs with its group's lead node or is read through (an elided
  // layout node, fast/attention_plan.h), the group's op at the lead (a conv
  // with what its epilogue takes in, fast/conv_group.h; a SiLU, fast/silu.h;
  // a BatchNorm with its clamp, fast/channel_affine.h; a linear layer,
  // fast/linear.h; an attention MatMul with the layout ops it folds,
  // fast/attention_plan.h), at plan step `i`, on NHWC data between
  // segments or in the graph's order. Whether `n` was in a group.
  Result<bool> add_group(const fast::FastPlan& fast_plan, NodeId n, bool nhwc, size_t i,
                         const xnnpack::EnginePlan& plan, std::vector<Result<std::unique_ptr<xnnpack::Segment>>>& segments,
                         const std::vector<int>& step_of, const std::function<Tensor&(ValueId)>& tensor_of) {
    if (fast_plan.elided.count(n)) {
      // Read through by the MatMuls after it; counted as a fast op.
      ++coverage_.portable_ops;
      ++coverage_.fast_ops;
      return true;
    }
    if (fast_plan.runs_with_group(n)) return true;
    fast::FastOpContext ctx{graph_, graph_.node(n), pool_, tensor_of};
    ctx.nhwc = nhwc;
    // A grouped stem (a conv and its SiLU) reads the island's NCHW input
    // too: without this its op read those bytes as NHWC.
    ctx.nchw_input = nhwc && reads_island_input(graph_.node(n));
    // The group `n` leads in one of the plan's lists, made by `make`.
    const auto add = [&](const auto& lead_at, const auto& groups, const auto& make) -> Result<bool> {
      const auto g = lead_at.find(n);
      if (g == lead_at.end()) return false;
      const auto& group = groups[g->second];
      HS_ASSIGN_OR_RETURN(auto op, make(ctx, group));
      add_fast_step(std::move(op), group.nodes(), group.output, i, plan, segments, step_of);
      return true;
    };
    // A node leads at most one group: the first list that has it decides.
    Result<bool> added = add(fast_plan.conv_group_at, fast_plan.conv_groups, fast::make_conv_group);
    if (added.is_ok() && !*added) added = add(fast_plan.silu_at, fast_plan.silu, fast::make_silu);
    if (added.is_ok() && !*added) added = add(fast_plan.affine_at, fast_plan.affine, fast::make_affine);
    if (added.is_ok() && !*added) added = add(fast_plan.se_at, fast_plan.se, fast::make_se_excite);
    if (added.is_ok() && !*added) added = add(fast_plan.linear_at, fast_plan.linear, fast::make_linear);
    if (added.is_ok() && !*added) added = add(fast_plan.strided_at, fast_plan.strided, fast::make_strided_matmul);
    return added;
  }

  // Whether `node`'s input 0 is an island input: on an NHWC step it stays
  // in the caller's NCHW order (a stem conv; segment_plan.h, pass 4).
  bool reads_island_input(const Node& node) const {
    return !node.inputs.empty() && node.inputs[0] != kNoValue && xnnpack::is_island_input(graph_, node.inputs[0]);
  }

  // A step running `op` for `nodes` at plan step `i`, writing `output`
  // straight into the staging of the one segment reading it where there is
  // one (sole_reader_staging).
  void add_fast_step(std::unique_ptr<fast::FastOp> op, std::vector<NodeId> nodes, ValueId output, size_t i,
                     const xnnpack::EnginePlan& plan, std::vector<Result<std::unique_ptr<xnnpack::Segment>>>& segments,
                     const std::vector<int>& step_of) {
    if (float* staging = sole_reader_staging(output, i, plan, segments, step_of)) op->write_to(staging);
    fast_writer_[output] = steps_.size();
    coverage_.portable_ops += static_cast<int>(nodes.size());
    coverage_.fast_ops += static_cast<int>(nodes.size());
    steps_.push_back(Step{{}, nullptr, nullptr, std::move(op), std::move(nodes)});
  }

  // Has the fast ops writing `concat`'s inputs write them into its output
  // (`node`'s, wherever write_to sent it) where island_arena.h allows it
  // and the op can (FastOp::write_channels_into), and `node` skip them:
  // a Fire module's or an Inception block's branches land in their
  // Concat's output directly, without the copy.
  void write_concat_inputs_in_place(const Node& concat, xnnpack::NhwcNode& node) {
    const int64_t channels = graph_.value(concat.outputs[0]).type.shape[1];
    int64_t offset = 0;
    for (size_t k = 0; k < concat.inputs.size(); ++k) {
      const ValueId v = concat.inputs[k];
      const int64_t c = graph_.value(v).type.shape[1];
      const auto writer = fast_writer_.find(v);
      if (writer != fast_writer_.end() && concat_input_in_place(graph_, concat, k) &&
          steps_[writer->second].fast->write_channels_into(node.output() + offset, channels)) {
        node.input_in_place(k);
        ++coverage_.concat_inputs_in_place;
      }
      offset += c;
    }
  }

  // The intermediate tensors island_arena.h places, created before any
  // step binds them. HETSCHED_CPU_ARENA=off gives every one its own buffer
  // (to measure what the arena buys), views aside: the plan's layout views
  // (segment_plan.h) are views or wrong, and the others go with them.
  Status place_in_arena(const xnnpack::EnginePlan& plan, const fast::FastPlan& fast_plan) {
    IslandArena arena;
    if (fast::rule_choice("HETSCHED_CPU_ARENA") == fast::RuleChoice::kOff) {
      arena.views = island_views(graph_, plan, fast_plan);
      for (const auto& [view, root] : arena.views) arena.view_nodes.insert(graph_.value(view).producer);
    } else {
      HS_ASSIGN_OR_RETURN(arena, plan_island_arena(graph_, plan, fast_plan));
    }
    arena_ = AlignedBuffer(static_cast<size_t>(arena.bytes));
    for (const auto& [v, offset] : arena.placed) {
      tensors_.insert_or_assign(v, Tensor::borrow(graph_.value(v).type, arena_.data() + offset, /*read_slack=*/true));
      in_arena_.push_back(v);
    }
    // Views share their root's bytes (every buffer here has the read slack).
    views_ = arena.views;
    view_nodes_ = arena.view_nodes;
    for (const auto& [view, root] : views_)
      tensors_.insert_or_assign(view, Tensor::borrow(graph_.value(view).type, tensor(root).raw(), /*read_slack=*/true));
    spdlog::debug("[CPU] island {}: {} intermediate tensors in an arena of {} bytes, {} views of them", island_id_,
                  arena.placed.size(), arena.bytes, views_.size());
    return Status::ok();
  }

  // Undoes place_in_arena (before planning again): no step is bound yet.
  void forget_arena() {
    for (ValueId v : in_arena_) tensors_.erase(v);
    for (const auto& [view, root] : views_) tensors_.erase(view);
    in_arena_.clear();
    views_.clear();
    view_nodes_.clear();
  }

  // When `value`, written by step `writer`, is read by one later segment
  // only and is no island output: that segment's staging buffer, which the
  // writer fills instead of the island's tensor, sparing the segment its
  // copy in (Segment::adopt_input). nullptr otherwise.
  float* sole_reader_staging(ValueId value, size_t writer, const xnnpack::EnginePlan& plan,
                             std::vector<Result<std::unique_ptr<xnnpack::Segment>>>& segments,
                             const std::vector<int>& step_of) {
    if (graph_.is_output(value)) return nullptr;
    int reader_step = -1;
    for (NodeId r : graph_.consumers(value)) {
      const int s = step_of[r];
      reader_step = reader_step == -1 || reader_step == s ? s : -2;
    }
    if (reader_step <= static_cast<int>(writer) || !plan.steps[reader_step].xnnpack || !segments[reader_step].is_ok())
      return nullptr;
    return (*segments[reader_step])->adopt_input(value);
  }

  // For each island input, the segments that read it from the caller's
  // bytes: all of its readers, when every reader is a segment that copies
  // it into staging anyway. Otherwise none, and execute() copies it into
  // the island's tensor.
  void find_direct_readers() {
    std::vector<const Step*> step_of(graph_.num_nodes(), nullptr);
    for (const Step& step : steps_)
      for (NodeId n : step.nodes) step_of[n] = &step;
    for (ValueId v : graph_.inputs()) {
      std::vector<xnnpack::Segment*> readers;
      bool direct = !graph_.is_output(v);
      for (NodeId r : graph_.consumers(v)) {
        const Step* s = step_of[r];
        if (!s || !s->segment) direct = false;
        if (!direct) break;
        if (std::find(readers.begin(), readers.end(), s->segment.get()) == readers.end())
          readers.push_back(s->segment.get());
      }
      if (readers.empty()) direct = false;
      for (xnnpack::Segment* s : readers) direct = direct && s->read_input_from(v, nullptr);
      direct_readers_.push_back(direct ? std::move(readers) : std::vector<xnnpack::Segment*>{});
    }
  }

  // One entry per plan step: the segment, or why it could not be created
  // (also for portable steps, which have none).
  std::vector<Result<std::unique_ptr<xnnpack::Segment>>> create_segments(const xnnpack::EnginePlan& plan,
                                                                          const xnnpack::Segment::TensorOf& tensor_of) {
    std::vector<Result<std::unique_ptr<xnnpack::Segment>>> segments;
    for (const xnnpack::EngineStep& step : plan.steps) {
      if (step.xnnpack)
        segments.push_back(xnnpack::Segment::create(
            graph_, step, fast::segment_wants_pool(graph_, step) ? threadpool_.get() : nullptr, tensor_of));
      else
        segments.push_back(unsupported("not an XNNPACK step"));
    }
    return segments;
  }

  // With engine xnnpack, XNNPACK segments and fast kernels (fast/fast_plan.h).
  xnnpack::EnginePlan plan_for(CpuEngine engine, fast::FastPlan& fast_plan) const {
    fast_plan.on_fast_kernel.assign(graph_.num_nodes(), false);
    if (engine == CpuEngine::kPortable) return xnnpack::portable_plan(graph_, "engine is portable");
    const Status init = xnnpack::ensure_initialized();
    if (init.is_ok()) return fast::plan_with_fast_kernels(graph_, fast_plan, pool_ ? pool_->threads() : 1);
    spdlog::warn("[CPU] island {}: XNNPACK is unavailable, running on the portable kernels: {}", island_id_,
                 init.message());
    return xnnpack::portable_plan(graph_, "XNNPACK is unavailable");
  }

  Result<PreparedNode> prepare_portable(const Node& n) {
    const KernelFn* kernel = find_kernel(n.op);
    if (!kernel) return unsupported("failed to init cpu island: op '" + n.op + "' has no portable kernel");
    PreparedNode p{&n, kernel, {}, {}};
    for (ValueId in : n.inputs) p.inputs.push_back(in == kNoValue ? nullptr : &value_tensor_for_read(in));
    for (ValueId out : n.outputs) p.outputs.push_back(&tensor(out));
    return p;
  }

  // The tensor of a non-constant value, allocated on first use. Its address
  // never changes (unordered_map keeps elements in place), which the
  // prepared nodes and XNNPACK runtimes rely on.
  Tensor& tensor(ValueId v) { return tensors_.try_emplace(v, graph_.value(v).type).first->second; }

  const Tensor& value_tensor_for_read(ValueId v) {
    const Value& val = graph_.value(v);
    return val.is_constant() ? *val.constant : tensor(v);
  }

  const Tensor& value_tensor(ValueId v) const {
    const Value& val = graph_.value(v);
    return val.is_constant() ? *val.constant : tensors_.at(v);
  }

  Graph graph_;
  // Node outputs and island inputs that some step reads or writes outside
  // XNNPACK (values inside a segment live in its runtime); constants live in graph_.
  AlignedBuffer arena_;  // before tensors_, whose arena tensors borrow it
  std::vector<ValueId> in_arena_;     // IslandArena::placed's values
  std::map<ValueId, ValueId> views_;  // IslandArena::views: view -> root, its bytes
  std::set<NodeId> view_nodes_;       // IslandArena::view_nodes: run as no step
  std::unordered_map<ValueId, Tensor> tensors_;
  // The delegate's one pool, shared with its other islands; null where the
  // system refused a thread. pool_ is the same pool, for the fast and
  // portable kernels and the edge copies.
  xnnpack::Threadpool threadpool_;
  ThreadPool* pool_ = nullptr;
  // Points into graph_, tensors_ and threadpool_: declared after them.
  std::vector<Step> steps_;
  std::vector<std::vector<xnnpack::Segment*>> direct_readers_;  // by island input (find_direct_readers)
  std::map<ValueId, size_t> fast_writer_;  // value -> the steps_ index of the fast op writing it (add_fast_step)
  int island_id_;
  bool profile_ops_ = false;
  CpuEngineCoverage coverage_;
};

class CpuDelegate final : public Delegate {
 public:
  CpuDelegate(int threads, CpuEngine engine) : threads_(threads), engine_(engine) {}

  std::string_view name() const override { return "cpu"; }
  std::string resource() const override { return "cpu"; }

  Capability supports(const Graph& graph, NodeId node) const override {
    const Node& n = graph.node(node);
    if (!find_kernel(n.op)) return Capability::no("op " + n.op + " has no portable kernel");
    return Capability::yes();
  }

  // Nodes XNNPACK does not take run in the portable kernels, whose
  // convolutions and matmuls are plain loops: several times slower.
  CostEstimate estimate(const Graph& graph, NodeId node, const DelegateCosts& costs) const override {
    const OpWork work = op_work(graph, node);
    const bool heavy = work.op_class == OpClass::kConv || work.op_class == OpClass::kMatMul;
    if (!heavy || (engine_ == CpuEngine::kXnnpack && xnnpack::xnnpack_coverage(graph, node).covered))
      return Delegate::estimate(graph, node, costs);
    constexpr double kPortableSlowdown = 6;
    DelegateCosts portable = costs;
    portable.rate(work.op_class).gflops /= kPortableSlowdown;
    return {work.flops, work.bytes, node_seconds(portable, work)};
  }

  Result<Blob> compile(const Island& island, const CompileSpecs& specs) const override {
    Graph sub = extract_subgraph(*island.graph, island.nodes, island.inputs, island.outputs);
    sub.set_name(island.graph->name() + "/cpu" + std::to_string(island.id));
    return serialize_graph(sub);
  }

  Result<std::unique_ptr<IslandHandle>> init(const Blob& blob, const InitContext& ctx) override {
    auto graph = deserialize_graph(blob);
    if (!graph.is_ok()) return graph.status().with_context("failed to init cpu island " + std::to_string(ctx.island_id) + ": ");
    if (engine_ == CpuEngine::kXnnpack) {
      // Erf-form GELU as one Gelu node, which the fast kernels run in one
      // pass (the portable engine keeps the graph as it came, the oracle).
      HS_ASSIGN_OR_RETURN(const int gelus, fuse_gelu(*graph));
      if (gelus > 0) spdlog::debug("[CPU] init: island {}, {} written-out GELU(s) fused", ctx.island_id, gelus);
      // ShuffleNet's Reshape-Transpose-Reshape as one op, which runs in
      // NHWC between segments (xnnpack/nhwc_ops.h).
      HS_ASSIGN_OR_RETURN(const int shuffles, fuse_channel_shuffle(*graph));
      if (shuffles > 0) spdlog::debug("[CPU] init: island {}, {} channel shuffle(s) fused", ctx.island_id, shuffles);
      // torch.roll's Slices and Concat as one Gather: one pass, not two.
      HS_ASSIGN_OR_RETURN(const int rolls, concat_of_slices_to_gather(*graph));
      if (rolls > 0) spdlog::debug("[CPU] init: island {}, {} Concat(s) of Slices as Gathers", ctx.island_id, rolls);
    }
    spdlog::debug("[CPU] init: island {}, {} threads, engine {}", ctx.island_id,
                  threads_ > 0 ? std::to_string(threads_) : "all",
                  engine_ == CpuEngine::kXnnpack ? "xnnpack" : "portable");
    return CpuIslandHandle::create(std::move(graph).value(), engine_, ctx.island_id, ctx.profile_ops,
                                   [this] { return shared_threadpool(); });
  }

 private:
  // One pool for all of this delegate's islands (threads_ - 1 workers, the
  // calling thread the last), made by the first island's init. Islands of
  // one session run one at a time (the "cpu" resource lock); each session
  // has a delegate, so a pool of its own.
  Result<xnnpack::Threadpool> shared_threadpool() {
    std::lock_guard<std::mutex> lock(threadpool_mutex_);
    if (!threadpool_) {
      HS_ASSIGN_OR_RETURN(threadpool_, xnnpack::make_threadpool(threads_));
    }
    return threadpool_;
  }

  int threads_;
  CpuEngine engine_;
  std::mutex threadpool_mutex_;
  xnnpack::Threadpool threadpool_;  // islands hold it too, so it outlives their runtimes
};

}  // namespace

Result<std::unique_ptr<Delegate>> make_cpu_delegate(const DelegateOptions& options) {
  const std::string threads_text = compile_spec_value(options, "threads", "0");
  int threads = 0;
  try {
    threads = std::stoi(threads_text);
  } catch (...) {
    return invalid_argument("failed to make cpu delegate: threads '" + threads_text + "' is not an integer");
  }
  if (threads < 0) return invalid_argument("failed to make cpu delegate: threads must be >= 0");
  const std::string engine_text = compile_spec_value(options, "engine", "xnnpack");
  CpuEngine engine = CpuEngine::kXnnpack;
  if (engine_text == "portable")
    engine = CpuEngine::kPortable;
  else if (engine_text != "xnnpack")
    return invalid_argument("failed to make cpu delegate: engine '" + engine_text +
                            "' is not one of xnnpack, portable");
  return std::unique_ptr<Delegate>(new CpuDelegate(threads, engine));
}

const CpuEngineCoverage* cpu_engine_coverage(const IslandHandle& handle) {
  const auto* cpu = dynamic_cast<const CpuIslandHandle*>(&handle);
  return cpu ? &cpu->coverage() : nullptr;
}

const ThreadPool* cpu_thread_pool(const IslandHandle& handle) {
  const auto* cpu = dynamic_cast<const CpuIslandHandle*>(&handle);
  return cpu ? cpu->pool() : nullptr;
}

}  // namespace hetsched::cpu
