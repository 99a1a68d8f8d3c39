// Conv nodes carrying an activation fused at import (graph/passes/
// fused_activation.h) must get that activation on every engine: the GPU
// delegates apply it or refuse the node. Each case runs on vulkan and on vgf
// (lavapipe, validation on) and is compared with the CPU delegate.
#include <gtest/gtest.h>

#include <cstdlib>

#include "graph/builder.h"
#include "scheduler/pipeline.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

struct ActivationCase {
  std::string name;
  std::vector<std::pair<std::string, Attribute>> attrs;
  bool gpu_supports = true;
};

Graph conv_with(const ActivationCase& c) {
  GraphBuilder b("fused_" + c.name);
  ValueId x = b.input("x", {DType::kFloat32, {1, 3, 9, 7}});
  ValueId w = b.constant("w", testing::random_tensor({5, 3, 3, 3}, 11, -0.5f, 0.5f));
  ValueId bias = b.constant("b", testing::random_tensor({5}, 12, -0.2f, 0.2f));
  ValueId y = b.op("Conv", {x, w, bias}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  for (const auto& [k, v] : c.attrs) b.raw().node(0).attrs.set(k, v);
  b.output(y);
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

Profile gpu_profile(const std::string& delegate) {
  Profile p = default_profile();
  p.name = delegate + "-test";
  p.delegates[delegate].enabled = true;
  p.delegates[delegate].shared_gpu.token = "fused_conv_test";
  p.partition.prefer = delegate == "vgf" ? "vgf_first" : "vulkan_first";
  p.log_level = "error";
  return p;
}

class FusedConvGpuTest : public testing::VkTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { ::setenv("HETSCHED_VK_VALIDATION", "1", 1); }
  void TearDown() override {
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }
};

TEST_P(FusedConvGpuTest, EveryFusedActivationMatchesTheCpu) {
  const std::string delegate = GetParam();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<ActivationCase> cases = {
      {"relu", {{"activation", std::string("Relu")}}},
      {"clip", {{"activation", std::string("Clip")}, {"activation_min", 0.f}, {"activation_max", 0.3f}}},
      {"clip_open", {{"activation", std::string("Clip")}, {"activation_min", -kInf}, {"activation_max", 0.1f}}},
      {"sigmoid", {{"activation", std::string("Sigmoid")}}},
      {"hard_sigmoid",
       {{"activation", std::string("HardSigmoid")}, {"activation_alpha", 0.3f}, {"activation_beta", 0.4f}}},
      {"hard_swish", {{"activation", std::string("HardSwish")}}},
      {"leaky_relu", {{"activation", std::string("LeakyRelu")}, {"activation_alpha", 0.1f}}, false},
  };
  const Tensor input = testing::random_tensor({1, 3, 9, 7}, 5, -2.f, 2.f);
  for (const ActivationCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Graph g = conv_with(c);
    auto cpu = open_session_for_graph(g, default_profile());
    auto gpu = open_session_for_graph(g, gpu_profile(delegate));
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
    ASSERT_TRUE(gpu.is_ok()) << gpu.status().message();
    // Refused kinds fall back to the CPU rather than running without the activation.
    EXPECT_EQ((*gpu)->program().islands[0].delegate, c.gpu_supports ? delegate : "cpu");
    for (const std::string& key : SharedGpuContextRegistry::get().keys())
      watch(*SharedGpuContextRegistry::get().lookup(key));
    auto want = (*cpu)->run({input});
    auto got = (*gpu)->run({input});
    ASSERT_TRUE(want.is_ok() && got.is_ok());
    for (int64_t i = 0; i < want->at(0).num_elements(); ++i)
      ASSERT_NEAR(got->at(0).data<float>()[i], want->at(0).data<float>()[i], 1e-4f) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Delegates, FusedConvGpuTest, ::testing::Values("vulkan", "vgf"));

}  // namespace
}  // namespace hetsched
