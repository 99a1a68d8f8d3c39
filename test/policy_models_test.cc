// The models on which a fixed partition order loses (examples/policy_models.h):
// they build and validate at their default sizes, run on the CPU profile
// with the portable kernels' outputs, and cut into the islands they are
// meant to (many tiny GPU islands; Convs alone on the GPU) under a GPU-first
// order. GPU cases on lavapipe with validation on.
#include <gtest/gtest.h>

#include <cstdlib>

#include "delegates/cpu/cpu_reference.h"
#include "examples/policy_models.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

// Small sizes: the tests check structure and numbers, not speed.
constexpr examples::TinyIslandsOptions kTiny{.channels = 4, .size = 16, .repeats = 4};
constexpr examples::GpuHeavyOpOptions kHeavy{.channels = 8, .size = 12, .convs = 2};

Profile profile_from(const std::string& yaml) {
  auto p = parse_profile(yaml);
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  return p.is_ok() ? *p : default_profile();
}

// Runs `graph` under `profile` and compares with the portable kernels.
void expect_matches_reference(const Graph& graph, const Profile& profile, uint32_t seed) {
  auto session = open_session_for_graph(graph, profile);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  const std::vector<Tensor> inputs = {testing::random_tensor(graph.value(graph.inputs()[0]).type.shape, seed)};
  auto got = (*session)->run(inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  auto want = cpu::run_graph_reference(graph, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_LT(testing::max_abs_diff((*got)[0], (*want)[0]), 1e-4f);
}

TEST(PolicyModelsTest, BuildAtTheirDefaultSizes) {
  auto tiny = examples::make_tiny_islands({});
  ASSERT_TRUE(tiny.is_ok()) << tiny.status().message();
  EXPECT_EQ(tiny->num_nodes(), 30u);  // 10 × (LeakyRelu, Add, Relu)
  EXPECT_EQ(tiny->value(tiny->inputs()[0]).type.byte_size(), 2u << 20);
  auto heavy = examples::make_gpu_heavy_op({});
  ASSERT_TRUE(heavy.is_ok()) << heavy.status().message();
  EXPECT_EQ(heavy->num_nodes(), 5u);  // LeakyRelu, 2 × (Conv, LeakyRelu)
}

TEST(PolicyModelsTest, TinyIslandsMatchesTheReferenceOnTheCpu) {
  auto graph = examples::make_tiny_islands(kTiny);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_matches_reference(*graph, default_profile(), 1);
}

TEST(PolicyModelsTest, GpuHeavyOpMatchesTheReferenceOnTheCpu) {
  auto graph = examples::make_gpu_heavy_op(kHeavy);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  expect_matches_reference(*graph, default_profile(), 2);
}

class PolicyModelsGpuTest : public testing::VkTest {
 protected:
  void SetUp() override { ::setenv("HETSCHED_VK_VALIDATION", "1", 1); }
  void TearDown() override {
    for (const std::string& key : SharedGpuContextRegistry::get().keys())
      watch(*SharedGpuContextRegistry::get().lookup(key));
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }
  static Profile vulkan(const std::string& prefer) {
    return profile_from("name: policy\n"
                        "delegates:\n"
                        "  vulkan: {enabled: true, shared_gpu: {token: policy_models_test, group: 0}}\n"
                        "  cpu: {enabled: true, threads: 1}\n"
                        "partition: {prefer: " + prefer + "}\n");
  }
  static std::vector<std::string> island_delegates(const Graph& graph, const Profile& profile) {
    auto planned = plan_model(graph, profile);
    EXPECT_TRUE(planned.is_ok()) << planned.status().message();
    std::vector<std::string> out;
    if (planned.is_ok())
      for (const PlannedIsland& island : planned->plan.islands) out.push_back(island.delegate);
    return out;
  }
};

// vulkan_first: a CPU island (LeakyRelu) and a GPU island (Add, Relu) per
// repeat; cpu_first: one CPU island. Both give the reference's outputs.
TEST_F(PolicyModelsGpuTest, TinyIslandsCutsIntoTinyGpuIslandsUnderVulkanFirst) {
  auto graph = examples::make_tiny_islands(kTiny);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  std::vector<std::string> alternating;
  for (int i = 0; i < kTiny.repeats; ++i) alternating.insert(alternating.end(), {"cpu", "vulkan"});
  EXPECT_EQ(island_delegates(*graph, vulkan("vulkan_first")), alternating);
  EXPECT_EQ(island_delegates(*graph, vulkan("cpu_first")), std::vector<std::string>{"cpu"});
  expect_matches_reference(*graph, vulkan("vulkan_first"), 3);
}

// vulkan_first puts each Conv on the GPU between CPU LeakyRelus.
TEST_F(PolicyModelsGpuTest, GpuHeavyOpPutsTheConvsOnTheGpuUnderVulkanFirst) {
  auto graph = examples::make_gpu_heavy_op(kHeavy);
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  EXPECT_EQ(island_delegates(*graph, vulkan("vulkan_first")),
            (std::vector<std::string>{"cpu", "vulkan", "cpu", "vulkan", "cpu"}));
  EXPECT_EQ(island_delegates(*graph, vulkan("cpu_first")), std::vector<std::string>{"cpu"});
  expect_matches_reference(*graph, vulkan("vulkan_first"), 4);
}

}  // namespace
}  // namespace hetsched
