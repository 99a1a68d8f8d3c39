// The RFC model run as the RFC intends — VGF → Vulkan → VGF on one shared
// VkDevice — and on Vulkan alone, on lavapipe with validation on, against the
// CPU delegate's (portable kernels') result and the numpy reference.
#include <gtest/gtest.h>

#include <cstdlib>

#include "examples/rfc_model.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

constexpr float kTolerance = 1e-5f;  // sin/cos on lavapipe vs libm differ by a few ulp

class MixedGpuTest : public testing::VkTest {
 protected:
  void SetUp() override { ::setenv("HETSCHED_VK_VALIDATION", "1", 1); }
  void TearDown() override {
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }

  Profile load(const std::string& config) {
    auto p = load_profile(testing::source_path(config).string());
    EXPECT_TRUE(p.is_ok()) << p.status().message();
    return p.is_ok() ? *p : default_profile();
  }

  // Runs the RFC model under `profile`; watches every GPU context it made.
  std::vector<Tensor> run(const Profile& profile, RunStats* stats, Program* program_out = nullptr) {
    auto graph = examples::make_rfc_model();
    EXPECT_TRUE(graph.is_ok());
    auto program = build_program(*graph, profile);
    EXPECT_TRUE(program.is_ok()) << program.status().message();
    if (!program.is_ok()) return {};
    if (program_out) *program_out = *program;
    auto session = Session::create(std::move(program).value(), profile);
    EXPECT_TRUE(session.is_ok()) << session.status().message();
    if (!session.is_ok()) return {};
    for (const std::string& key : SharedGpuContextRegistry::get().keys())
      watch(*SharedGpuContextRegistry::get().lookup(key));
    auto out = (*session)->run({examples::rfc_model_input()}, stats);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    return out.is_ok() ? *out : std::vector<Tensor>{};
  }

  static std::vector<Tensor> cpu_reference() {
    auto graph = examples::make_rfc_model();
    auto program = build_program(*graph, default_profile());
    auto session = Session::create(std::move(program).value(), default_profile());
    return *(*session)->run({examples::rfc_model_input()});
  }

  static void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].type(), want[i].type());
      for (int64_t k = 0; k < got[i].num_elements(); ++k)
        EXPECT_NEAR(got[i].data<float>()[k], want[i].data<float>()[k], kTolerance) << "element " << k;
    }
  }
};

TEST_F(MixedGpuTest, RfcModelRunsVgfVulkanVgfOnOneDeviceLikeTheCpu) {
  const Profile profile = load("configs/mixed_gpu.yaml");
  RunStats stats;
  Program program;
  const auto out = run(profile, &stats, &program);
  ASSERT_EQ(program.islands.size(), 3u);
  EXPECT_EQ(program.islands[0].delegate, "vgf");
  EXPECT_EQ(program.islands[0].op_types, (std::vector<std::string>{"Transpose", "AveragePool"}));
  EXPECT_EQ(program.islands[1].delegate, "vulkan");
  EXPECT_EQ(program.islands[1].op_types, (std::vector<std::string>{"Gather", "GatherElements", "Gather"}));
  EXPECT_EQ(program.islands[2].delegate, "vgf");
  EXPECT_EQ(program.islands[2].op_types.size(), 5u);
  // The two inner handoffs stay on the device.
  int device_copies = 0;
  for (const auto& step : program.steps)
    if (step.kind == StepKind::kHandoff && step.handoff == HandoffKind::kDeviceCopy) device_copies++;
  EXPECT_EQ(device_copies, 2);
  // One context, shared by both delegates.
  EXPECT_EQ(SharedGpuContextRegistry::get().keys(), (std::vector<std::string>{"vgf_vk_unified_e2e:7"}));
  expect_same(out, cpu_reference());
  // timeline: the host waits once, to read the output back.
  EXPECT_EQ(stats.host_waits, 1);
}

// Islands on two GPU contexts share no memory: their handoffs go through the
// host (a readback, then an upload), with a host slot for the tensor. Two
// shared contexts under different tokens, and a private one (mode disabled)
// that names the other's keys, must both give the CPU's result.
TEST_F(MixedGpuTest, IslandsOnTwoContextsHandOffThroughTheHost) {
  for (const bool private_vgf : {false, true}) {
    Profile profile = load("configs/mixed_gpu.yaml");
    if (private_vgf) profile.delegates["vgf"].shared_gpu.mode = SharedContextMode::kDisabled;
    else profile.delegates["vulkan"].shared_gpu.token = "another_token";
    RunStats stats;
    Program program;
    const auto out = run(profile, &stats, &program);
    ASSERT_EQ(program.islands.size(), 3u) << private_vgf;
    int copies = 0;
    for (const ProgramStep& step : program.steps) {
      if (step.kind != StepKind::kHandoff || step.from == "host" || step.to == "host") continue;
      EXPECT_EQ(step.handoff, HandoffKind::kDeviceCopy) << step.from << " -> " << step.to << ", private " << private_vgf;
      copies++;
    }
    EXPECT_GE(copies, 2);
    expect_same(out, cpu_reference());
  }
}

TEST_F(MixedGpuTest, QueueWaitIdleGivesTheSameOutputWithAHostWaitPerGpuStep) {
  Profile profile = load("configs/mixed_gpu.yaml");
  profile.sync = SyncMode::kQueueWaitIdle;
  RunStats stats;
  const auto out = run(profile, &stats);
  expect_same(out, cpu_reference());
  // The input's upload (NCHW to the VGF island's NHWC: the layout permute
  // runs on the GPU), 3 islands and 2 device copies idle the queue, then the
  // readback waits once.
  EXPECT_EQ(stats.host_waits, 7);
}

TEST_F(MixedGpuTest, SyncNoneIsRefusedWhenGpuIslandsDependOnEachOther) {
  Profile profile = load("configs/mixed_gpu.yaml");
  profile.sync = SyncMode::kNone;
  auto graph = examples::make_rfc_model();
  auto program = build_program(*graph, profile);
  ASSERT_TRUE(program.is_ok());
  auto session = Session::create(std::move(program).value(), profile);
  ASSERT_FALSE(session.is_ok());
  EXPECT_NE(session.status().message().find("sync mode 'none' cannot run this program: vulkan#1 reads"),
            std::string::npos)
      << session.status().message();
}

TEST_F(MixedGpuTest, VulkanOnlyProfileGivesThePortableResult) {
  const Profile profile = load("configs/vulkan.yaml");
  RunStats stats;
  Program program;
  const auto out = run(profile, &stats, &program);
  ASSERT_EQ(program.islands.size(), 1u);
  EXPECT_EQ(program.islands[0].delegate, "vulkan");
  expect_same(out, cpu_reference());
}

TEST_F(MixedGpuTest, RepeatedRunsReuseTheRecordedCommandBuffers) {
  const Profile profile = load("configs/mixed_gpu.yaml");
  auto graph = examples::make_rfc_model();
  auto program = build_program(*graph, profile);
  ASSERT_TRUE(program.is_ok());
  auto session = Session::create(std::move(program).value(), profile);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  watch(*SharedGpuContextRegistry::get().lookup("vgf_vk_unified_e2e:7"));
  const auto want = cpu_reference();
  for (int i = 0; i < 5; ++i) {
    auto out = (*session)->run({examples::rfc_model_input()});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    expect_same(*out, want);
  }
}

}  // namespace
}  // namespace hetsched
