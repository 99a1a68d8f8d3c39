#include "delegates/cpu/cpu_delegate.h"

#include <oneapi/tbb/task_arena.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <unordered_map>

#include "delegates/cpu/kernel.h"
#include "graph/graph_serialize.h"
#include "graph/op_schema.h"
#include "graph/subgraph.h"

namespace hetsched::cpu {
namespace {

// One node ready to run: its kernel and the tensors it reads and writes.
struct PreparedNode {
  const Node* node;
  const KernelFn* kernel;
  std::vector<const Tensor*> inputs;
  std::vector<Tensor*> outputs;
};

class CpuIslandHandle final : public IslandHandle {
 public:
  static Result<std::unique_ptr<IslandHandle>> create(Graph graph, int threads, int island_id) {
    auto handle = std::unique_ptr<CpuIslandHandle>(new CpuIslandHandle(std::move(graph), threads, island_id));
    HS_RETURN_IF_ERROR(handle->prepare());
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
    for (size_t i = 0; i < gin.size(); ++i) {
      Tensor& t = tensors_.at(gin[i]);
      std::memcpy(t.raw(), inputs[i].host, t.byte_size());
    }
    Status status;
    arena_.execute([&] {
      for (const PreparedNode& p : nodes_) {
        KernelContext kc{*p.node, p.inputs, p.outputs, graph_.opset()};
        status = (*p.kernel)(kc);
        if (!status.is_ok()) return;
      }
    });
    HS_RETURN_IF_ERROR(status);
    for (size_t i = 0; i < gout.size(); ++i) {
      const Tensor& t = value_tensor(gout[i]);
      std::memcpy(outputs[i].host, t.raw(), t.byte_size());
    }
    spdlog::debug("[CPU] execute: island {}, {} ops", island_id_, nodes_.size());
    return Status::ok();
  }

 private:
  CpuIslandHandle(Graph graph, int threads, int island_id)
      : graph_(std::move(graph)),
        arena_(threads > 0 ? threads : tbb::task_arena::automatic),
        island_id_(island_id) {}

  // Allocates a tensor for every non-constant value and binds each node to
  // its kernel, so execute() does no lookups or allocations.
  Status prepare() {
    for (ValueId v = 0; v < static_cast<ValueId>(graph_.num_values()); ++v) {
      const Value& val = graph_.value(v);
      if (!val.is_constant()) tensors_.emplace(v, Tensor(val.type));
    }
    for (const Node& n : graph_.nodes()) {
      const KernelFn* kernel = find_kernel(n.op);
      if (!kernel) return unsupported("failed to init cpu island: op '" + n.op + "' has no portable kernel");
      PreparedNode p{&n, kernel, {}, {}};
      for (ValueId in : n.inputs) p.inputs.push_back(in == kNoValue ? nullptr : &value_tensor(in));
      for (ValueId out : n.outputs) p.outputs.push_back(&tensors_.at(out));
      nodes_.push_back(std::move(p));
    }
    return Status::ok();
  }

  const Tensor& value_tensor(ValueId v) const {
    const Value& val = graph_.value(v);
    return val.is_constant() ? *val.constant : tensors_.at(v);
  }

  Graph graph_;
  std::unordered_map<ValueId, Tensor> tensors_;  // node outputs and island inputs; constants live in graph_
  std::vector<PreparedNode> nodes_;             // points into graph_ and tensors_: declared after them
  tbb::task_arena arena_;
  int island_id_;
};

class CpuDelegate final : public Delegate {
 public:
  explicit CpuDelegate(int threads) : threads_(threads) {}

  std::string_view name() const override { return "cpu"; }
  std::string resource() const override { return "cpu"; }

  Capability supports(const Graph& graph, NodeId node) const override {
    const Node& n = graph.node(node);
    if (!find_kernel(n.op)) return Capability::no("op " + n.op + " has no portable kernel");
    return Capability::yes();
  }

  Result<Blob> compile(const Island& island, const CompileSpecs& specs) const override {
    Graph sub = extract_subgraph(*island.graph, island.nodes, island.inputs, island.outputs);
    sub.set_name(island.graph->name() + "/cpu" + std::to_string(island.id));
    return serialize_graph(sub);
  }

  Result<std::unique_ptr<IslandHandle>> init(const Blob& blob, const InitContext& ctx) override {
    auto graph = deserialize_graph(blob);
    if (!graph.is_ok()) return graph.status().with_context("failed to init cpu island " + std::to_string(ctx.island_id) + ": ");
    spdlog::debug("[CPU] init: island {}, {} ops, {} threads", ctx.island_id, graph->num_nodes(),
                  threads_ > 0 ? std::to_string(threads_) : "all");
    return CpuIslandHandle::create(std::move(graph).value(), threads_, ctx.island_id);
  }

 private:
  int threads_;
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
  return std::unique_ptr<Delegate>(new CpuDelegate(threads));
}

}  // namespace hetsched::cpu
