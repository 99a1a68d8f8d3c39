// Policy auto on hand-made graphs whose best plan is known: by construction
// (tiny islands that cost more in handoffs than they save, one heavy op that
// belongs on the GPU, two branches that belong on two resources) and by
// exhaustive search over every assignment of small random graphs. The
// delegates answer supports() from a table of op types and keep tensors on
// the host or a device, which is all the partitioner and the cost model see
// of them; the figures are a CostTable written for each test.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "graph/builder.h"
#include "partitioner/auto_policy.h"
#include "partitioner/partitioner.h"
#include "partitioner/plan_cost.h"
#include "test/table_delegate.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::TableDelegate;

DelegateCosts uniform(double gflops, double gbps, double dispatch_us, double island_us) {
  DelegateCosts c;
  for (OpClass k : kAllOpClasses) c.rate(k) = {gflops, gbps};
  c.dispatch_us = dispatch_us;
  c.island_us = island_us;
  return c;
}

// A CPU at 10 GFLOP/s and 10 GB/s; a GPU 100× faster at compute, 10× at
// memory, 20 µs per island; handoffs 50 µs + 1 GB/s.
CostTable slow_cpu_fast_gpu() {
  CostTable t;
  t.source = "test";
  t.delegates["cpu"] = uniform(10, 10, 1, 1);
  t.delegates["vulkan"] = uniform(1000, 100, 5, 20);
  t.delegates["vgf"] = uniform(500, 100, 5, 20);
  for (CutKind k : kAllCutKinds) t.transfer(k) = {50, 1};
  t.transfer(CutKind::kAlias) = {0, 1e9};
  return t;
}

struct Fixture {
  TableDelegate cpu{"cpu", {}};
  TableDelegate vulkan{"vulkan", {"Relu", "MatMul", "Add", "Sin"}, "gpu:0", true};
  TableDelegate vgf{"vgf", {"Relu", "Add"}, "gpu:0", true};
  CostTable costs = slow_cpu_fast_gpu();

  double min_gain = 0.10;
  Result<PartitionPlan> plan(const Graph& g, std::string policy, std::vector<Delegate*> order,
                             std::string fallback = "cpu", std::vector<PartitionPin> pins = {}) {
    PartitionOptions o;
    o.auto_min_gain = min_gain;
    o.policy = std::move(policy);
    o.costs = &costs;
    o.fallback = std::move(fallback);
    o.pins = std::move(pins);
    return partition(g, order, o);
  }
  std::vector<Delegate*> all() { return {&vgf, &vulkan, &cpu}; }
};

using hetsched::testing::build;

std::string where(const Graph& g, const PartitionPlan& plan, const std::string& node) {
  return plan.nodes[g.find_node(node)].delegate;
}

// Erf (CPU only) and Relu (anywhere) alternate on a 256 KiB tensor: each
// GPU Relu would save 0.05 ms and cost two 0.3 ms handoffs.
Graph tiny_islands() {
  GraphBuilder b("tiny_islands");
  ValueId x = b.input("x", {DType::kFloat32, {1, 16, 64, 64}});
  for (int i = 0; i < 5; ++i) {
    x = b.op("Erf", {x}, {}, "erf" + std::to_string(i));
    x = b.op("Relu", {x}, {}, "relu" + std::to_string(i));
  }
  b.output(x);
  return build(b);
}

TEST(AutoPolicyTest, KeepsTinyIslandsOnTheCpuWhereHandoffsCostMoreThanTheyUse) {
  Fixture f;
  Graph g = tiny_islands();
  Result<PartitionPlan> fixed = f.plan(g, "vulkan_first", {&f.vulkan, &f.vgf, &f.cpu});
  Result<PartitionPlan> chosen = f.plan(g, "auto", f.all());
  ASSERT_TRUE(fixed.is_ok() && chosen.is_ok()) << chosen.status().message();
  EXPECT_EQ(fixed->islands.size(), 10u);  // the trap: five GPU islands between five CPU ones
  ASSERT_EQ(chosen->islands.size(), 1u);
  EXPECT_EQ(chosen->islands[0].delegate, "cpu");
  EXPECT_LT(chosen->predicted_ms * 3, fixed->predicted_ms);
  EXPECT_EQ(chosen->nodes[g.find_node("relu2")].pass, AssignPass::kCost);
  EXPECT_EQ(chosen->nodes[g.find_node("erf2")].pass, AssignPass::kFallback);
}

// Erf → MatMul 256×256×256 (3.4 ms on this CPU, 0.03 ms on the GPU) → Erf.
Graph heavy_matmul() {
  GraphBuilder b("heavy_matmul");
  ValueId x = b.input("x", {DType::kFloat32, {1, 256, 256}});
  x = b.op("Erf", {x}, {}, "erf0");
  x = b.op("MatMul", {x, b.constant_f32("w", {256, 256}, std::vector<float>(256 * 256, 0.01f))}, {}, "mm");
  b.output(b.op("Erf", {x}, {}, "erf1"));
  return build(b);
}

TEST(AutoPolicyTest, MovesAHeavyOpToTheEngineThatRunsItFaster) {
  Fixture f;
  Graph g = heavy_matmul();
  Result<PartitionPlan> cpu_first = f.plan(g, "cpu_first", {&f.cpu, &f.vulkan, &f.vgf});
  Result<PartitionPlan> chosen = f.plan(g, "auto", f.all());
  ASSERT_TRUE(cpu_first.is_ok() && chosen.is_ok()) << chosen.status().message();
  EXPECT_EQ(where(g, *chosen, "mm"), "vulkan");
  EXPECT_EQ(where(g, *cpu_first, "mm"), "cpu");
  EXPECT_LT(chosen->predicted_ms * 2, cpu_first->predicted_ms);
  // The prediction adds up: Erf, upload, MatMul island, readback, Erf.
  double handoffs = 0;
  for (const CutEdge& e : chosen->edges) handoffs += e.predicted_ms;
  double islands = 0;
  for (const PlannedIsland& i : chosen->islands) islands += i.predicted_ms;
  EXPECT_NEAR(chosen->predicted_ms, islands + handoffs, 1e-9);
  // Handoff kinds follow where the value goes.
  std::set<std::string> kinds;
  for (const CutEdge& e : chosen->edges)
    if (e.from_island >= 0 && e.to_island >= 0) kinds.insert(std::string(cut_kind_name(e.kind)));
  EXPECT_EQ(kinds, (std::set<std::string>{"upload", "readback"}));
}

TEST(AutoPolicyTest, PinsHoldAndStrictFallbackKeepsSupportedNodesOffTheCpu) {
  Fixture f;
  Graph g = heavy_matmul();
  Result<PartitionPlan> pinned = f.plan(g, "auto", f.all(), "cpu", {{"", "mm", "cpu"}});
  ASSERT_TRUE(pinned.is_ok()) << pinned.status().message();
  EXPECT_EQ(where(g, *pinned, "mm"), "cpu");
  EXPECT_EQ(pinned->nodes[g.find_node("mm")].pass, AssignPass::kPinned);

  // Relus alone are cheaper on the CPU, but fallback: error forbids it.
  GraphBuilder b("relus");
  ValueId x = b.input("x", {DType::kFloat32, {1, 16, 64, 64}});
  for (int i = 0; i < 3; ++i) x = b.op("Relu", {x}, {}, "relu" + std::to_string(i));
  b.output(x);
  Graph relus = build(b);
  Result<PartitionPlan> strict = f.plan(relus, "auto", f.all(), "error");
  ASSERT_TRUE(strict.is_ok()) << strict.status().message();
  for (const NodeAssignment& a : strict->nodes) EXPECT_NE(a.delegate, "cpu");
  Result<PartitionPlan> lenient = f.plan(relus, "auto", f.all());
  ASSERT_TRUE(lenient.is_ok());
  for (const NodeAssignment& a : lenient->nodes) EXPECT_EQ(a.delegate, "cpu");
  // A node only the CPU runs is still refused under fallback: error.
  Result<PartitionPlan> refused = f.plan(g, "auto", f.all(), "error");
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("erf0"), std::string::npos) << refused.status().message();
}

TEST(AutoPolicyTest, RunsTwoEqualBranchesOnTwoResourcesAtOnce) {
  Fixture f;
  // CPU and GPU equally fast, handoffs nearly free: only overlap separates plans.
  f.costs.delegates["cpu"] = uniform(100, 100, 1, 1);
  f.costs.delegates["vulkan"] = uniform(100, 100, 1, 1);
  for (CutKind k : kAllCutKinds) f.costs.transfer(k) = {1, 1000};
  GraphBuilder b("branches");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 256, 256}});
  const ValueId w = b.constant_f32("w", {256, 256}, std::vector<float>(256 * 256, 0.01f));
  const ValueId l = b.op("MatMul", {b.op("MatMul", {x, w}, {}, "l0"), w}, {}, "l1");
  const ValueId r = b.op("MatMul", {b.op("MatMul", {x, w}, {}, "r0"), w}, {}, "r1");
  b.output(b.op("Add", {l, r}, {}, "join"));
  Graph g = build(b);
  Result<PartitionPlan> chosen = f.plan(g, "auto", {&f.vulkan, &f.cpu});
  Result<PartitionPlan> one = f.plan(g, "cpu_first", {&f.cpu, &f.vulkan});
  ASSERT_TRUE(chosen.is_ok() && one.is_ok()) << chosen.status().message();
  EXPECT_NE(where(g, *chosen, "l1"), where(g, *chosen, "r1"));
  EXPECT_EQ(where(g, *chosen, "l0"), where(g, *chosen, "l1"));
  EXPECT_LT(chosen->predicted_ms, 0.6 * one->predicted_ms);
}

Graph random_graph(uint32_t seed, int nodes);

TEST(AutoPolicyTest, KeepsTheBestDelegateOrderUnlessTheSearchGainsTheMargin) {
  Fixture f;
  int kept = 0, searched = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    Graph g = random_graph(seed, 9);
    f.min_gain = 0;
    Result<PartitionPlan> free = f.plan(g, "auto", f.all());
    f.min_gain = 0.10;
    Result<PartitionPlan> guarded = f.plan(g, "auto", f.all());
    ASSERT_TRUE(free.is_ok() && guarded.is_ok());
    double best_order = std::numeric_limits<double>::infinity();
    for (const auto& [name, ms] : guarded->candidates)
      if (name != "auto") best_order = std::min(best_order, ms);
    if (free->predicted_ms < 0.9 * best_order) {
      EXPECT_DOUBLE_EQ(guarded->predicted_ms, free->predicted_ms) << "seed " << seed;
      searched++;
    } else {
      EXPECT_DOUBLE_EQ(guarded->predicted_ms, best_order) << "seed " << seed;
      kept++;
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(searched, 0);
}

// A CPU node between two GPU nodes copies its input in and its output out
// (edge_gbps); between two CPU nodes nothing crosses an edge.
TEST(PlanCostModelTest, HostIslandsPayTheirEdgeCopiesOnTheirOwnCores) {
  GraphBuilder b("edges");
  ValueId x = b.input("x", {DType::kFloat32, {1, 64, 64, 64}});  // 1 MiB
  x = b.op("Relu", {x}, {}, "relu0");
  x = b.op("Erf", {x}, {}, "erf");
  x = b.op("Relu", {x}, {}, "relu1");
  b.output(x);
  const Graph g = build(b);
  Fixture f;
  f.costs.delegates["cpu"].edge_gbps = 1;
  const std::vector<Delegate*> delegates{&f.cpu, &f.vulkan};
  const PlanCostModel model(g, delegates, f.costs);
  const double mib = 1 << 20;
  const PlanCostModel::Timeline mixed = model.simulate({1, 0, 1});
  EXPECT_NEAR(mixed.edge_s[1], 2 * mib / 1e9, 1e-12);  // in from the GPU, out to it
  EXPECT_EQ(mixed.edge_s[0], 0);                        // device delegates' edges are handoffs
  const PlanCostModel::Timeline cpu = model.simulate({0, 0, 0});
  EXPECT_NEAR(cpu.edge_s[0], mib / 1e9, 1e-12);  // the graph input
  EXPECT_EQ(cpu.edge_s[1], 0);
  EXPECT_NEAR(cpu.edge_s[2], mib / 1e9, 1e-12);  // the graph output
  f.costs.delegates["cpu"].edge_gbps = 0;
  EXPECT_LT(PlanCostModel(g, delegates, f.costs).latency({1, 0, 1}), mixed.total_s - 1.9 * mib / 1e9);
}

TEST(AutoPolicyTest, NeedsCostFigures) {
  Fixture f;
  Graph g = heavy_matmul();
  PartitionOptions o;
  o.policy = "auto";
  Result<PartitionPlan> plan = partition(g, f.all(), o);
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
}

// A random DAG of `nodes` ops on [1, 64, 64] tensors: Relu, Sin, Erf, MatMul
// with a constant, Add of two earlier values.
Graph random_graph(uint32_t seed, int nodes) {
  std::mt19937 rng(seed);
  GraphBuilder b("random" + std::to_string(seed));
  std::vector<ValueId> values{b.input("x", {DType::kFloat32, {1, 64, 64}})};
  const ValueId w = b.constant_f32("w", {64, 64}, std::vector<float>(64 * 64, 0.01f));
  for (int i = 0; i < nodes; ++i) {
    const ValueId a = values[rng() % values.size()];
    const std::string name = "n" + std::to_string(i);
    switch (rng() % 5) {
      case 0: values.push_back(b.op("Relu", {a}, {}, name)); break;
      case 1: values.push_back(b.op("Sin", {a}, {}, name)); break;
      case 2: values.push_back(b.op("Erf", {a}, {}, name)); break;
      case 3: values.push_back(b.op("MatMul", {a, w}, {}, name)); break;
      default: values.push_back(b.op("Add", {a, values[rng() % values.size()]}, {}, name)); break;
    }
  }
  b.output(values.back());
  b.output(values[values.size() / 2]);
  return build(b);
}

TEST(AutoPolicyTest, FindsTheExhaustiveOptimumOnSmallRandomGraphs) {
  Fixture f;
  f.min_gain = 0;  // the search itself; the margin is tested below
  std::vector<Delegate*> delegates = f.all();
  int exact = 0;
  constexpr int kGraphs = 30;
  for (uint32_t seed = 1; seed <= kGraphs; ++seed) {
    Graph g = random_graph(seed, 9);
    PlanCostModel model(g, delegates, f.costs);
    // Every assignment the capabilities allow.
    const int n = static_cast<int>(g.num_nodes());
    std::vector<int> a(n, 0);
    double optimum = std::numeric_limits<double>::infinity();
    for (;;) {
      bool ok = true;
      for (int k = 0; k < n && ok; ++k) ok = delegates[a[k]]->supports(g, k).supported;
      if (ok) optimum = std::min(optimum, model.latency(a));
      int k = 0;
      while (k < n && ++a[k] == 3) a[k++] = 0;
      if (k == n) break;
    }
    Result<PartitionPlan> plan = f.plan(g, "auto", delegates);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    // The plan as partitioned (islands formed) predicts what the search found.
    std::vector<int> chosen;
    for (const NodeAssignment& na : plan->nodes)
      chosen.push_back(na.delegate == "vgf" ? 0 : na.delegate == "vulkan" ? 1 : 2);
    const double found = model.latency(chosen);
    EXPECT_NEAR(plan->predicted_ms, found * 1e3, 1e-9);
    EXPECT_LE(found, optimum * 1.05) << "seed " << seed;
    exact += found <= optimum * (1 + 1e-9);
  }
  // Local search is not exhaustive: most, not necessarily all, are optimal.
  EXPECT_GE(exact, kGraphs * 8 / 10);
  std::printf("auto found the exhaustive optimum on %d of %d random graphs\n", exact, kGraphs);
}

TEST(AutoPolicyTest, PlansALargeGraphWithinItsSimulationBudget) {
  Fixture f;
  Graph g = random_graph(7, 3000);
  PlanCostModel model(g, f.all(), f.costs);
  AutoSearchInput in;
  in.allowed.assign(3, std::vector<bool>(g.num_nodes()));
  in.pinned.assign(g.num_nodes(), -1);
  for (int d = 0; d < 3; ++d)
    for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n)
      in.allowed[d][n] = f.all()[d]->supports(g, n).supported;
  in.seed_orders = {{0, 1, 2}, {2, 1, 0}};
  in.seed_names = {"vgf>vulkan>cpu", "cpu>vulkan>vgf"};
  AutoSearchResult r = search_assignment(g, model, in);
  ASSERT_EQ(r.delegate_of.size(), g.num_nodes());
  EXPECT_LE(r.predicted_s, std::min(r.candidates[0].second, r.candidates[1].second));
  EXPECT_LE(r.simulations, 20000);
}

}  // namespace
}  // namespace hetsched
