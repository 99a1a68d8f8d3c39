// logging.profile_ops: every island's kernels, XNNPACK segments and GPU
// dispatches come back as op events nested in their island's event, naming
// the graph nodes they ran; and the pieces `calibrate --model` builds on:
// op signatures, measured times in the costs file and in the plan's cost.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

#include "examples/rfc_model.h"
#include "graph/builder.h"
#include "graph/op_work.h"
#include "partitioner/plan_cost.h"
#include "profile/costs_file.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"
#include "test/table_delegate.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

class OpProfileTest : public testing::VkTest {
 protected:
  void SetUp() override { ::setenv("HETSCHED_VK_VALIDATION", "1", 1); }
  void TearDown() override {
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }

  // Runs the RFC model twice under `config` (profile_ops as given) and
  // returns the second run's stats.
  RunStats run(const std::string& config, bool profile_ops) {
    auto loaded = load_profile(testing::source_path(config).string());
    EXPECT_TRUE(loaded.is_ok()) << loaded.status().message();
    Profile profile = *loaded;
    profile.profile_ops = profile_ops;
    auto graph = examples::make_rfc_model();
    EXPECT_TRUE(graph.is_ok());
    graph_ = *graph;
    auto program = build_program(graph_, profile);
    EXPECT_TRUE(program.is_ok()) << program.status().message();
    auto session = Session::create(std::move(program).value(), profile);
    EXPECT_TRUE(session.is_ok()) << session.status().message();
    for (const std::string& key : SharedGpuContextRegistry::get().keys())
      watch(*SharedGpuContextRegistry::get().lookup(key));
    RunStats stats;
    for (int i = 0; i < 2; ++i) {
      stats = RunStats();
      auto out = (*session)->run({examples::rfc_model_input()}, &stats);
      EXPECT_TRUE(out.is_ok()) << out.status().message();
    }
    return stats;
  }

  // The nodes that do work (not Reshape and kin), by name.
  std::set<std::string> working_nodes() const {
    std::set<std::string> names;
    for (NodeId n = 0; n < static_cast<NodeId>(graph_.num_nodes()); ++n)
      if (op_class_of(graph_.node(n).op) != OpClass::kFree) names.insert(graph_.node(n).name);
    return names;
  }

  // Every op event lies inside its island's event, and the island's pieces
  // take no longer than the island. Returns the nodes named, by island.
  std::map<std::string, std::multiset<std::string>> check_nesting(const RunStats& stats) {
    std::map<std::string, const TraceEvent*> islands;
    for (const TraceEvent& e : stats.events)
      if (!e.op && e.name.rfind("island ", 0) == 0) islands[e.name] = &e;
    std::map<std::string, std::multiset<std::string>> nodes;
    std::map<std::string, double> piece_ms;
    for (const TraceEvent& e : stats.events) {
      if (!e.op) continue;
      EXPECT_FALSE(e.nodes.empty()) << e.name;
      EXPECT_EQ(e.nodes.size(), e.ops.size()) << e.name;
      EXPECT_GE(e.ms, 0.0) << e.name;
      auto it = islands.find(e.island);
      if (it == islands.end()) {
        ADD_FAILURE() << e.name << " names island '" << e.island << "', which has no event";
        continue;
      }
      const TraceEvent& island = *it->second;
      EXPECT_EQ(e.track, island.track) << e.name;
      // 50 µs of slack: host pieces start after the island's inputs are copied in.
      EXPECT_GE(e.start_ms, island.start_ms - 0.05) << e.name;
      EXPECT_LE(e.start_ms + e.ms, island.start_ms + island.ms + 0.05) << e.name;
      piece_ms[e.island] += e.ms;
      for (const std::string& n : e.nodes) nodes[e.island].insert(n);
    }
    for (const auto& [island, ms] : piece_ms) EXPECT_LE(ms, islands[island]->ms + 0.05) << island;
    return nodes;
  }

  Graph graph_;
};

TEST_F(OpProfileTest, CpuIslandTimesEveryStepAndNamesEveryNodeOnce) {
  const RunStats stats = run("configs/default.yaml", true);
  const auto nodes = check_nesting(stats);
  ASSERT_EQ(nodes.size(), 1u);
  const std::multiset<std::string>& named = nodes.begin()->second;
  // Each node of the island ran in exactly one timed step.
  std::set<std::string> distinct(named.begin(), named.end());
  EXPECT_EQ(distinct.size(), named.size());
  for (const std::string& n : working_nodes()) EXPECT_EQ(named.count(n), 1u) << n;
}

TEST_F(OpProfileTest, VulkanIslandTimesEveryDispatchWithGpuTimestamps) {
  const RunStats stats = run("configs/vulkan.yaml", true);
  const auto nodes = check_nesting(stats);
  ASSERT_EQ(nodes.size(), 1u);
  for (const std::string& n : working_nodes()) EXPECT_GE(nodes.begin()->second.count(n), 1u) << n;
  int dispatches = 0;
  for (const TraceEvent& e : stats.events)
    if (e.op) {
      EXPECT_TRUE(e.gpu_clock) << e.name;
      dispatches += e.op_kind == "dispatch";
    }
  EXPECT_GE(dispatches, 1);
}

TEST_F(OpProfileTest, OffByDefault) {
  for (const TraceEvent& e : run("configs/vulkan.yaml", false).events) EXPECT_FALSE(e.op) << e.name;
}

TEST_F(OpProfileTest, VgfIslandTimesEveryDispatchWithGpuTimestamps) {
  // The mixed profile runs VGF islands beside a Vulkan one.
  const RunStats mixed = run("configs/mixed_gpu.yaml", true);
  const auto nodes = check_nesting(mixed);
  const std::set<std::string> graph_nodes = [&] {
    std::set<std::string> names;
    for (NodeId n = 0; n < static_cast<NodeId>(graph_.num_nodes()); ++n) names.insert(graph_.node(n).name);
    return names;
  }();
  int vgf_islands = 0;
  for (const auto& [island, named] : nodes) {
    if (island.find("(vgf)") == std::string::npos) continue;
    ++vgf_islands;
    for (const std::string& n : named) EXPECT_EQ(graph_nodes.count(n), 1u) << island << " names '" << n << "'";
  }
  EXPECT_GE(vgf_islands, 1);
  for (const TraceEvent& e : mixed.events)
    if (e.op && e.island.find("(vgf)") != std::string::npos) {
      EXPECT_TRUE(e.gpu_clock) << e.name;
      EXPECT_EQ(e.op_kind, "dispatch") << e.name;
    }
}

TEST(OpSignatureTest, SameWorkSameSignatureInAnyGraph) {
  const auto conv = [](int64_t stride, const std::string& name) {
    GraphBuilder b("g_" + name);
    ValueId x = b.input("x", {DType::kFloat32, {1, 8, 16, 16}});
    ValueId w = b.constant(name + "_w", testing::random_tensor({4, 8, 3, 3}, 1));
    ValueId y = b.op("Conv", {x, w}, {{"strides", std::vector<int64_t>{stride, stride}}}, name);
    b.output(b.op("Relu", {y}, {}, name + "_relu"));
    return b.build();
  };
  auto a = conv(1, "a"), b = conv(1, "b"), c = conv(2, "c");
  ASSERT_TRUE(a.is_ok() && b.is_ok() && c.is_ok());
  const std::string sa = op_signature(*a, 0);
  EXPECT_EQ(sa, op_signature(*b, 0));  // other names, other weights: the same work
  EXPECT_NE(sa, op_signature(*c, 0));
  EXPECT_EQ(sa, "Conv(f32[1,8,16,16],c:f32[4,8,3,3])->f32[1,4,14,14]{strides=[1,1]}");
  EXPECT_NE(op_signature(*a, 1), sa);
}

TEST(MeasuredCostsTest, FileRoundTripAndBadTimesNameTheirLine) {
  CostTable table;
  table.source = "test";
  DelegateCosts cpu = builtin_delegate_costs("cpu", "cpu", 1);
  cpu.measured_us["Relu(f32[1,4])->f32[1,4]{}"] = 1.25;
  cpu.measured_us["Conv(f32[1,8,16,16],c:f32[4,8,3,3])->f32[1,4,14,14]{strides=[1,1]}"] = 40;
  table.delegates["cpu"] = cpu;
  const std::string text = format_costs_yaml(table, "");
  auto back = parse_costs(text, "m.yaml");
  ASSERT_TRUE(back.is_ok()) << back.status().message() << "\n" << text;
  EXPECT_EQ(back->delegates.at("cpu").measured_us, cpu.measured_us);

  std::string bad = text;
  const size_t at = bad.find(": 1.25");
  ASSERT_NE(at, std::string::npos) << text;
  bad.replace(at, 6, ": -3");
  auto refused = parse_costs(bad, "m.yaml");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("m.yaml:"), std::string::npos) << refused.status().message();
  EXPECT_NE(refused.status().message().find("measured_us.Relu(f32[1,4])->f32[1,4]{}: "), std::string::npos)
      << refused.status().message();
}

TEST(MeasuredCostsTest, PlanCostUsesTheMeasuredTimeOfASignature) {
  auto graph = examples::make_rfc_model();
  ASSERT_TRUE(graph.is_ok());
  testing::TableDelegate cpu("cpu", {});
  CostTable table;
  table.delegates["cpu"] = builtin_delegate_costs("cpu", "cpu", 1);
  NodeId working = 0;
  while (op_class_of(graph->node(working).op) == OpClass::kFree) ++working;
  const PlanCostModel roofline(*graph, {&cpu}, table);
  table.delegates["cpu"].measured_us[op_signature(*graph, working)] = 12345;
  const PlanCostModel measured(*graph, {&cpu}, table);
  EXPECT_DOUBLE_EQ(measured.node_seconds(0, working), 12345e-6);
  EXPECT_NE(roofline.node_seconds(0, working), measured.node_seconds(0, working));
}

}  // namespace
}  // namespace hetsched
