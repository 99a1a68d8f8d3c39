// The partitioner's passes on graphs built to exercise each rule. The
// delegates here answer supports() from a table of op types: the partitioner
// sees delegates only through their capability answers, so a table is enough
// to place any node anywhere — including the placements that trap a naive
// island grouping.
#include "partitioner/partitioner.h"

#include <gtest/gtest.h>

#include <set>

#include "graph/builder.h"
#include "partitioner/island_builder.h"
#include "partitioner/preview.h"
#include "test/table_delegate.h"

namespace hetsched {
namespace {

using testing::TableDelegate;

struct Fixture {
  TableDelegate vgf{"vgf", {"Transpose", "AveragePool", "Sin", "Cos", "Reciprocal", "Mul", "Relu", "Reshape", "Add"}};
  TableDelegate vulkan{"vulkan", {"Gather", "GatherElements", "Sin", "Relu", "Add", "Mul", "Softmax"}};
  TableDelegate cpu{"cpu", {}};
  std::vector<Delegate*> order(std::initializer_list<std::string> names) {
    std::vector<Delegate*> out;
    for (const auto& n : names) out.push_back(n == "vgf" ? static_cast<Delegate*>(&vgf) : n == "vulkan" ? &vulkan : &cpu);
    return out;
  }
};

const std::vector<int64_t> kSwap{0, 1, 3, 2};

// The RFC model's structure: Transpose, AveragePool | Gather x3 | Sin, Cos, Reciprocal, Mul, Transpose.
Graph rfc_like() {
  GraphBuilder b("rfc_like");
  ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
  ValueId ci = b.constant_i64("ci", {3}, {2, 0, 1});
  ValueId gi = b.constant_i64("gi", {1, 3, 4, 4}, std::vector<int64_t>(48, 1));
  ValueId t = b.op("Transpose", {x}, {{"perm", kSwap}}, "t0");
  t = b.op("AveragePool", {t}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}, "pool");
  t = b.op("Gather", {t, ci}, {{"axis", int64_t{1}}}, "g0");
  t = b.op("GatherElements", {t, gi}, {{"axis", int64_t{3}}}, "g1");
  t = b.op("Gather", {t, ci}, {{"axis", int64_t{1}}}, "g2");
  ValueId s = b.op("Sin", {t}, {}, "sin");
  ValueId c = b.op("Cos", {t}, {}, "cos");
  ValueId r = b.op("Reciprocal", {c}, {}, "rec");
  b.output(b.op("Transpose", {b.op("Mul", {s, r}, {}, "mul")}, {{"perm", kSwap}}, "t1"));
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

std::vector<std::string> island_delegates(const PartitionPlan& plan) {
  std::vector<std::string> out;
  for (const auto& i : plan.islands) out.push_back(i.delegate);
  return out;
}

std::string delegate_of(const Graph& g, const PartitionPlan& plan, const std::string& node) {
  return plan.nodes[g.find_node(node)].delegate;
}

bool plan_is_acyclic(const Graph& g, const PartitionPlan& plan) {
  std::vector<int> island_of;
  for (const auto& n : plan.nodes) island_of.push_back(n.island);
  return island_graph_is_acyclic(g, island_of, static_cast<int>(plan.islands.size()));
}

TEST(PartitionerTest, VgfFirstSplitsTheRfcModelAsTheRfcIntends) {
  Fixture f;
  Graph g = rfc_like();
  PartitionOptions o;
  o.policy = "vgf_first";
  auto plan = partition(g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(island_delegates(*plan), (std::vector<std::string>{"vgf", "vulkan", "vgf"}));
  EXPECT_EQ(plan->islands[0].nodes.size(), 2u);
  EXPECT_EQ(plan->islands[1].nodes.size(), 3u);
  EXPECT_EQ(plan->islands[2].nodes.size(), 5u);
  // Handoffs: host→vgf#0, vgf#0→vulkan#1, vulkan#1→vgf#2 (read by sin and cos: one edge), vgf#2→host.
  ASSERT_EQ(plan->edges.size(), 4u);
  EXPECT_EQ(plan->edges[1].from_island, 0);
  EXPECT_EQ(plan->edges[1].to_island, 1);
  EXPECT_EQ(plan->edges[1].bytes, 3u * 4 * 4 * 4);
  EXPECT_EQ(plan->nodes[g.find_node("sin")].reason, "first in policy vgf_first");
}

TEST(PartitionerTest, VulkanFirstTakesWhatVulkanSupports) {
  Fixture f;
  Graph g = rfc_like();
  PartitionOptions o;
  o.policy = "vulkan_first";
  auto plan = partition(g, f.order({"vulkan", "vgf", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(delegate_of(g, *plan, "sin"), "vulkan");
  EXPECT_EQ(delegate_of(g, *plan, "cos"), "vgf");
  EXPECT_EQ(delegate_of(g, *plan, "t0"), "vgf");
  EXPECT_TRUE(plan_is_acyclic(g, *plan));
}

TEST(PartitionerTest, CpuFirstPutsEverythingOnTheCpu) {
  Fixture f;
  Graph g = rfc_like();
  PartitionOptions o;
  o.policy = "cpu_first";
  auto plan = partition(g, f.order({"cpu", "vgf", "vulkan"}), o);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(island_delegates(*plan), (std::vector<std::string>{"cpu"}));
  EXPECT_EQ(plan->nodes[0].pass, AssignPass::kPolicy);
}

TEST(PartitionerTest, UnsupportedOpsFallBackToTheCpuWithTheReasons) {
  Fixture f;
  GraphBuilder b("fb");
  ValueId x = b.input("x", {DType::kFloat32, {1, 4}});
  b.output(b.op("Sigmoid", {b.op("Relu", {x}, {}, "relu")}, {}, "sig"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  PartitionOptions o;
  auto plan = partition(*g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok());
  const NodeAssignment& sig = plan->nodes[g->find_node("sig")];
  EXPECT_EQ(sig.delegate, "cpu");
  EXPECT_EQ(sig.pass, AssignPass::kFallback);
  EXPECT_EQ(sig.reason, "not supported by vgf: op Sigmoid not implemented; vulkan: op Sigmoid not implemented");
}

// a → {b on vulkan, c on vgf} → d on vgf, with a on vgf. Grouping a, c, d into
// one vgf island would make it both feed b and wait for b.
TEST(PartitionerTest, DiamondWithArmsOnDifferentDelegatesStaysAcyclic) {
  Fixture f;
  GraphBuilder b("diamond");
  ValueId x = b.input("x", {DType::kFloat32, {1, 8}});
  ValueId a = b.op("Relu", {x}, {}, "a");
  ValueId arm1 = b.op("Softmax", {a}, {}, "b");  // vulkan only
  ValueId arm2 = b.op("Cos", {a}, {}, "c");      // vgf only
  b.output(b.op("Add", {arm1, arm2}, {}, "d"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  PartitionOptions o;
  auto plan = partition(*g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_TRUE(plan_is_acyclic(*g, *plan));
  EXPECT_EQ(island_delegates(*plan), (std::vector<std::string>{"vgf", "vulkan", "vgf"}));
  EXPECT_EQ(plan->nodes[g->find_node("a")].island, plan->nodes[g->find_node("c")].island);
  EXPECT_NE(plan->nodes[g->find_node("a")].island, plan->nodes[g->find_node("d")].island);
}

// A long skip connection: a (vgf) feeds a chain on vulkan and, directly, the
// final node on vgf. The final node must not join a's island.
TEST(PartitionerTest, LongSkipConnectionAcrossAnotherDelegateStaysAcyclic) {
  Fixture f;
  GraphBuilder b("skip");
  ValueId x = b.input("x", {DType::kFloat32, {1, 8}});
  ValueId a = b.op("Cos", {x}, {}, "a");
  ValueId chain = a;
  for (int i = 0; i < 5; ++i) chain = b.op("Softmax", {chain}, {}, "s" + std::to_string(i));
  ValueId mid = b.op("Mul", {a, a}, {}, "mid");  // joins a's island: no path through vulkan
  b.output(b.op("Add", {chain, mid}, {}, "end"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  PartitionOptions o;
  auto plan = partition(*g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_TRUE(plan_is_acyclic(*g, *plan));
  EXPECT_EQ(plan->nodes[g->find_node("mid")].island, plan->nodes[g->find_node("a")].island);
  EXPECT_NE(plan->nodes[g->find_node("end")].island, plan->nodes[g->find_node("a")].island);
  // Execution order: every island's producers come before it.
  for (size_t n = 0; n < g->num_nodes(); ++n) {
    for (ValueId in : g->node(static_cast<NodeId>(n)).inputs) {
      const NodeId p = g->value(in).producer;
      if (p != kNoNode) {
        EXPECT_LE(plan->nodes[p].island, plan->nodes[n].island);
      }
    }
  }
}

TEST(PartitionerTest, PruningWithoutRetrySendsSmallIslandsToTheCpu) {
  Fixture f;
  Graph g = rfc_like();
  PartitionOptions o;
  o.policy = "vgf_first";
  o.min_partition_size = 3;  // vgf#0 has 2 compute nodes
  auto plan = partition(g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(island_delegates(*plan), (std::vector<std::string>{"cpu", "vulkan", "vgf"}));
  ASSERT_EQ(plan->pruned.size(), 1u);
  EXPECT_EQ(plan->pruned[0].delegate, "vgf");
  EXPECT_EQ(plan->pruned[0].compute_nodes, 2);
  EXPECT_EQ(plan->pruned[0].went_to, "cpu");
  const NodeAssignment& t0 = plan->nodes[g.find_node("t0")];
  EXPECT_EQ(t0.pass, AssignPass::kPruned);
  EXPECT_EQ(t0.reason, "pruned from vgf (island of 2 compute node(s) < min_partition_size 3)");
}

TEST(PartitionerTest, PruningWithRetryOffersNodesToTheNextDelegate) {
  Fixture f;
  GraphBuilder b("retry");
  ValueId x = b.input("x", {DType::kFloat32, {1, 8}});
  ValueId r = b.op("Relu", {x}, {}, "relu");          // vgf (and vulkan)
  ValueId s = b.op("Softmax", {r}, {}, "softmax");    // vulkan only
  b.output(b.op("Sin", {s}, {}, "sin"));               // vgf (and vulkan)
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  PartitionOptions o;
  o.min_partition_size = 2;
  o.retry_pruned = true;
  auto plan = partition(*g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  // Both one-node vgf islands go to vulkan, which then holds all three nodes.
  EXPECT_EQ(island_delegates(*plan), (std::vector<std::string>{"vulkan"}));
  EXPECT_EQ(plan->nodes[g->find_node("relu")].pass, AssignPass::kRetried);
  EXPECT_EQ(plan->nodes[g->find_node("softmax")].pass, AssignPass::kPolicy);
  o.retry_pruned = false;
  auto conservative = partition(*g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(conservative.is_ok());
  // Without retry the vgf nodes go to the CPU, and vulkan's lone Softmax is pruned too.
  EXPECT_EQ(island_delegates(*conservative), (std::vector<std::string>{"cpu"}));
}

TEST(PartitionerTest, ReshapesDoNotCountTowardsTheMinimumSize) {
  Fixture f;
  GraphBuilder b("reshape");
  ValueId x = b.input("x", {DType::kFloat32, {1, 8}});
  ValueId shape = b.constant_i64("shape", {2}, {2, 4});
  ValueId r = b.op("Reshape", {b.op("Relu", {x}, {}, "relu"), shape}, {}, "reshape");
  b.output(b.op("Reshape", {r, b.constant_i64("back", {2}, {1, 8})}, {}, "reshape2"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  PartitionOptions o;
  o.min_partition_size = 2;
  auto plan = partition(*g, f.order({"vgf", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(island_delegates(*plan), (std::vector<std::string>{"cpu"}));
  ASSERT_EQ(plan->pruned.size(), 1u);
  EXPECT_EQ(plan->pruned[0].compute_nodes, 1);
}

TEST(PartitionerTest, PinsOverrideThePolicyAndAreReported) {
  Fixture f;
  Graph g = rfc_like();
  PartitionOptions o;
  o.pins = {{"Sin", "", "cpu"}, {"", "t1", "cpu"}};
  auto plan = partition(g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan->nodes[g.find_node("sin")].delegate, "cpu");
  EXPECT_EQ(plan->nodes[g.find_node("sin")].reason, "pinned by op Sin");
  EXPECT_EQ(plan->nodes[g.find_node("t1")].reason, "pinned by node name");
  EXPECT_TRUE(plan_is_acyclic(g, *plan));
  // A pin survives min-size pruning.
  o.min_partition_size = 100;
  o.pins = {{"", "t0", "vgf"}};
  auto pinned = partition(g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(pinned.is_ok());
  EXPECT_EQ(pinned->nodes[g.find_node("t0")].delegate, "vgf");
}

TEST(PartitionerTest, PinToADelegateThatCannotRunTheNodeIsAnError) {
  Fixture f;
  Graph g = rfc_like();
  PartitionOptions o;
  o.pins = {{"Gather", "", "vgf"}};
  auto plan = partition(g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().message(),
            "failed to apply pin: node 'g0' (Gather) is pinned to vgf, which cannot run it: op Gather not implemented");
}

TEST(PartitionerTest, StrictFallbackListsEveryNodeLeftToTheCpu) {
  Fixture f;
  GraphBuilder b("strict");
  ValueId x = b.input("x", {DType::kFloat32, {1, 4}});
  b.output(b.op("Sigmoid", {b.op("Relu", {x}, {}, "relu")}, {}, "sig"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  PartitionOptions o;
  o.fallback = "error";
  auto plan = partition(*g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_EQ(plan.status().message(),
            "partition.fallback is 'error' and 1 node(s) would fall back to the cpu:\n"
            "  node 'sig' (Sigmoid): not supported by vgf: op Sigmoid not implemented; vulkan: op Sigmoid not "
            "implemented");
  // cpu_first is a choice, not a fallback.
  auto cpu_first = partition(*g, f.order({"cpu", "vgf"}), o);
  EXPECT_TRUE(cpu_first.is_ok());
}

TEST(PartitionerTest, JsonPreviewHasTheDocumentedKeysInExecutionOrder) {
  Fixture f;
  Graph g = rfc_like();
  PartitionOptions o;
  o.policy = "vgf_first";
  auto plan = partition(g, f.order({"vgf", "vulkan", "cpu"}), o);
  ASSERT_TRUE(plan.is_ok());
  PreviewProfile p;
  p.name = "default";
  const std::string json = format_plan_json(g, *plan, p);
  for (const char* key : {"\"islands\"", "\"handoffs\"", "\"pruned\"", "\"nodes\"", "\"input_bytes\"", "\"output_bytes\""})
    EXPECT_NE(json.find(key), std::string::npos) << key;
  EXPECT_LT(json.find("{\"id\": 0, \"delegate\": \"vgf\""), json.find("{\"id\": 1, \"delegate\": \"vulkan\""));
  const std::string dot = format_plan_dot(g, *plan);
  EXPECT_NE(dot.find("label=\"192 B\""), std::string::npos) << dot;
}

}  // namespace
}  // namespace hetsched
