// How long policy auto takes to plan a large graph: a generated residual
// network of 10,000 nodes (Conv, Relu, Add, and every fourth block an Erf
// that only the CPU delegate takes), partitioned over the real cpu, vulkan
// and vgf delegates with built-in cost figures — capability queries, the
// seeds, the local search, island formation and the prediction, as
// `hetsched preview --policy auto` runs them. Issue 10 asks for under 1 s
// (aim: 50 ms); the fixed policy vulkan_first is timed beside it.
//
//   auto_policy_bench [--benchmark_filter=...]   (Google Benchmark flags; needs a Vulkan device)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "delegates/registry.h"
#include "graph/builder.h"
#include "partitioner/partitioner.h"

namespace {

using namespace hetsched;

Graph residual_network(int nodes) {
  GraphBuilder b("residual" + std::to_string(nodes));
  ValueId x = b.input("x", {DType::kFloat32, {1, 8, 16, 16}});
  const ValueId w = b.constant_f32("w", {8, 8, 3, 3}, std::vector<float>(8 * 8 * 9, 0.01f));
  for (int block = 0; static_cast<int>(b.raw().num_nodes()) < nodes; ++block) {
    const std::string k = std::to_string(block);
    ValueId y = b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv_a" + k);
    y = b.op("Relu", {y}, {}, "relu" + k);
    y = b.op("Conv", {y, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv_b" + k);
    x = b.op("Add", {x, y}, {}, "add" + k);
    if (block % 4 == 3) x = b.op("Erf", {x}, {}, "erf" + k);
  }
  b.output(x);
  Result<Graph> g = b.build();
  if (!g.is_ok()) std::fprintf(stderr, "%s\n", g.status().message().c_str());
  return std::move(g).value();
}

void plan(benchmark::State& state, const std::string& policy) {
  static Graph graph = residual_network(10000);
  std::vector<std::unique_ptr<Delegate>> owned;
  std::vector<Delegate*> delegates;
  for (const char* name : {"vgf", "vulkan", "cpu"}) {
    Result<std::unique_ptr<Delegate>> d = make_delegate(name, {});
    if (!d.is_ok()) {
      state.SkipWithError(d.status().message().c_str());
      return;
    }
    delegates.push_back(d->get());
    owned.push_back(std::move(d).value());
  }
  CostTable costs;
  costs.source = "built-in";
  for (Delegate* d : delegates) costs.delegates[std::string(d->name())] = builtin_delegate_costs(d->name(), d->device_class(), 0);
  costs.transfers = builtin_transfer_costs(delegates[0]->device_class());
  PartitionOptions options;
  options.policy = policy;
  options.costs = &costs;
  (void)partition(graph, delegates, options);  // probes the device once, outside the timing
  size_t islands = 0;
  double predicted = 0;
  for (auto _ : state) {
    Result<PartitionPlan> p = partition(graph, delegates, options);
    if (!p.is_ok()) {
      state.SkipWithError(p.status().message().c_str());
      return;
    }
    islands = p->islands.size();
    predicted = p->predicted_ms;
  }
  state.counters["nodes"] = static_cast<double>(graph.num_nodes());
  state.counters["islands"] = static_cast<double>(islands);
  state.counters["predicted_ms"] = predicted;
}

BENCHMARK_CAPTURE(plan, auto, std::string("auto"))->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(plan, vulkan_first, std::string("vulkan_first"))->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
