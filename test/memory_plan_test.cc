// The program's memory plan (scheduler/memory_plan.h) on hand-built
// programs: buffers of steps that may run at the same time never share
// bytes, buffers of ordered steps do, an alias is one buffer, and the
// caller's inputs and outputs stay out of the host arena. No device.
#include <gtest/gtest.h>

#include "scheduler/memory_plan.h"

namespace hetsched {
namespace {

ProgramStep run(int island) { return {StepKind::kRunIsland, island, -1, HandoffKind::kHostCopy, "", "", ""}; }
ProgramStep handoff(HandoffKind kind, int island, int tensor) {
  return {StepKind::kHandoff, island, tensor, kind, "a", "b", ""};
}

DeviceMemoryNeeds needs(uint64_t scratch) {
  DeviceMemoryNeeds n;
  n.scratch_bytes = n.scratch_lower_bound = scratch;
  n.input_bytes = {1024};
  n.output_bytes = {1024};
  n.input_layouts = n.output_layouts = {TensorLayout::kNchw};
  return n;
}

// Two device islands: `chained` makes the second read the first's output
// through an alias; otherwise both read the model input (independent).
Program two_islands(bool chained) {
  Program p;
  const TensorType t{DType::kFloat32, {256}};
  p.tensors = {{"x", t}, {"a", t}, {"b", t}};
  p.islands = {{0, "vulkan", {}, {}, {0}, {1}, {"n0"}, {"Relu"}},
               {1, "vulkan", {}, {}, {chained ? 1 : 0}, {2}, {"n1"}, {"Relu"}}};
  p.inputs = {0};
  if (chained) {
    p.steps = {handoff(HandoffKind::kUpload, 0, 0), run(0), handoff(HandoffKind::kAlias, 1, 1), run(1),
               handoff(HandoffKind::kReadback, 1, 2)};
    p.outputs = {2};
  } else {
    p.steps = {handoff(HandoffKind::kUpload, 0, 0), run(0), handoff(HandoffKind::kUpload, 1, 0), run(1),
               handoff(HandoffKind::kReadback, 0, 1), handoff(HandoffKind::kReadback, 1, 2)};
    p.outputs = {1, 2};
  }
  return p;
}

const PlannedBuffer& find(const DomainPlan& d, const std::string& name) {
  for (const PlannedBuffer& b : d.buffers)
    if (b.name == name) return b;
  ADD_FAILURE() << "no buffer " << name;
  return d.buffers.front();
}

bool share(const PlannedBuffer& a, const PlannedBuffer& b) {
  return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

TEST(MemoryPlanTest, IndependentIslandsNeverShareBytes) {
  const Program p = two_islands(false);
  Result<MemoryPlan> plan = plan_program_memory(p, {needs(4096), needs(4096)}, {"gpu:t:0", "gpu:t:0"});
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  ASSERT_EQ(plan->domains.size(), 2u);
  const DomainPlan& gpu = plan->domains[1];
  // Disjoint in program order (steps 1 and 3), but nothing orders them.
  EXPECT_FALSE(share(find(gpu, "vulkan#0 scratch"), find(gpu, "vulkan#1 scratch")));
  EXPECT_EQ(plan->islands[0].domain, 1);
  EXPECT_EQ(plan->domains[0].planned_bytes, 0u);  // x, a and b are the caller's
  EXPECT_EQ(plan->host_offsets, (std::vector<int64_t>{-1, -1, -1}));
}

TEST(MemoryPlanTest, OrderedIslandsShareScratchAndAnAliasIsOneBuffer) {
  const Program p = two_islands(true);
  Result<MemoryPlan> plan = plan_program_memory(p, {needs(4096), needs(4096)}, {"gpu:t:0", "gpu:t:0"});
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  const DomainPlan& gpu = plan->domains[1];
  EXPECT_TRUE(share(find(gpu, "vulkan#0 scratch"), find(gpu, "vulkan#1 scratch")));
  EXPECT_EQ(plan->islands[1].input_offsets[0], plan->islands[0].output_offsets[0]);
  EXPECT_EQ(gpu.buffers.size(), 5u);  // 2 scratch, x in, a (out = in), b out
  // At island 1: its scratch, a and b live: 4096 + 2 x 1024.
  EXPECT_EQ(gpu.lower_bound, 6144u);
  EXPECT_LE(gpu.planned_bytes, 6144u + 1024u);
  EXPECT_GE(gpu.planned_bytes, gpu.lower_bound);
}

TEST(MemoryPlanTest, WithoutDeviceReuseEveryBufferHasItsOwnBytes) {
  const Program p = two_islands(true);
  Result<MemoryPlan> plan = plan_program_memory(p, {needs(4096), needs(4096)}, {"gpu:t:0", "gpu:t:0"}, false);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(plan->domains[1].planned_bytes, 2 * 4096u + 3 * 1024u);
}

}  // namespace
}  // namespace hetsched
