// Several Vulkan instances and devices in one process (shared_gpu/vk_loader.h):
// hetsched's private instance and a host application's own, both running a
// model at once, then both destroyed and made again and the model run on
// the new ones. Validation is on for every instance (the host's through its
// own messenger, hetsched's through HETSCHED_VK_VALIDATION, checked by the
// VkTest fixture at teardown); every answer is compared with the portable
// CPU kernels.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "host_vulkan_device.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"
#include "scheduler/session.h"
#include "vk_test_env.h"

namespace hetsched {
namespace {

const std::string kModel = std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model.hsg";

Profile profile_of(const std::string& yaml) {
  Result<Profile> profile = parse_profile(yaml, "multi_instance_test");
  EXPECT_TRUE(profile.is_ok()) << profile.status().message();
  return profile.is_ok() ? *profile : Profile{};
}

// The model on the context under `token` (made by hetsched when `mode` lets it).
Profile on_vulkan(const std::string& token, const std::string& mode) {
  return profile_of("name: t\ndelegates:\n  vulkan: {enabled: true, shared_gpu: {token: " + token +
                    ", group: 0, mode: " + mode + "}}\n  cpu: {enabled: true, threads: 1}\npartition: {prefer: vulkan_first}\n");
}

std::vector<float> input(float scale) {
  std::vector<float> v(192);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * scale;
  return v;
}

std::vector<float> run(Session& session, const std::vector<float>& x) {
  const TensorType in_type = session.input_types()[0];
  Result<std::vector<Tensor>> out = session.run({Tensor::borrow(in_type, const_cast<float*>(x.data()))});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  const float* y = reinterpret_cast<const float*>((*out)[0].raw());
  return std::vector<float>(y, y + (*out)[0].byte_size() / sizeof(float));
}

float max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

class MultiInstanceTest : public testing::VkTest {
 protected:
  void SetUp() override { ::setenv(kValidationEnvVar, "1", 1); }
  void TearDown() override {
    testing::VkTest::TearDown();
    ::unsetenv(kValidationEnvVar);
  }

  // hetsched's context under `token`, made by the session that just loaded,
  // has its validation log checked at teardown.
  void watch_private(const std::string& token) {
    std::shared_ptr<SharedGpuContext> context = SharedGpuContextRegistry::get().lookup(token + ":0");
    ASSERT_NE(context, nullptr) << token;
    EXPECT_TRUE(context->owns_instance());
    watch(*context);
  }

  // A host instance and device, lent under "host:0".
  void lend(testing::HostVulkanDeviceForTest& host) {
    SharedGpuContextCreateInfo info;
    info.instance = host.instance;
    info.physical_device = host.physical_device;
    info.device = host.device;
    info.queue = host.queue;
    info.queue_family_index = host.queue_family;
    Result<std::shared_ptr<SharedGpuContext>> borrowed = SharedGpuContext::borrow(info);
    ASSERT_TRUE(borrowed.is_ok()) << borrowed.status().message();
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("host:0", *borrowed).is_ok());
  }
};

// volk's pointers are the loader's exported trampolines, the same whichever
// instance exists; extension entry points are left null (fetched per instance).
TEST_F(MultiInstanceTest, EntryPointsAreTheLoadersExportsWhateverInstanceExists) {
  ASSERT_TRUE(load_vulkan_loader().is_ok());
  void* loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(loader, nullptr);
  testing::HostVulkanDeviceForTest host;
  if (std::string why = host.create("multi_instance_exports"); !why.empty()) GTEST_SKIP() << why;
  EXPECT_EQ(reinterpret_cast<void*>(vkQueueSubmit), dlsym(loader, "vkQueueSubmit"));
  EXPECT_EQ(reinterpret_cast<void*>(vkCmdDispatch), dlsym(loader, "vkCmdDispatch"));
  EXPECT_EQ(reinterpret_cast<void*>(vkWaitSemaphores), dlsym(loader, "vkWaitSemaphores"));
  EXPECT_EQ(reinterpret_cast<void*>(vkCreateDevice), dlsym(loader, "vkCreateDevice"));
  EXPECT_EQ(reinterpret_cast<void*>(vkEnumeratePhysicalDevices), dlsym(loader, "vkEnumeratePhysicalDevices"));
  EXPECT_EQ(vkCmdPipelineBarrier2KHR, nullptr);  // an extension: per instance or device only
  host.destroy();
  EXPECT_EQ(host.log->message_count(), 0u) << host.messages();
  dlclose(loader);
}

TEST_F(MultiInstanceTest, PrivateAndHostInstancesRunTogetherAndAgainAfterBeingMadeAgain) {
  const std::vector<float> x = input(0.3f);
  Result<std::unique_ptr<Session>> reference =
      open_session(kModel, profile_of("name: r\ndelegates:\n  cpu: {enabled: true, engine: portable, threads: 1}\n"));
  ASSERT_TRUE(reference.is_ok()) << reference.status().message();
  const std::vector<float> want = run(**reference, x);

  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    testing::HostVulkanDeviceForTest host;
    if (std::string why = host.create("multi_instance_host"); !why.empty()) GTEST_SKIP() << why;
    lend(host);
    {
      // hetsched's own instance (made now, under validation) and the host's.
      Result<std::unique_ptr<Session>> own = open_session(kModel, on_vulkan("private", "create_only"));
      ASSERT_TRUE(own.is_ok()) << own.status().message();
      watch_private("private");
      Result<std::unique_ptr<Session>> lent = open_session(kModel, on_vulkan("host", "lookup_only"));
      ASSERT_TRUE(lent.is_ok()) << lent.status().message();
      ASSERT_NE((*own)->device_io_context(), nullptr);  // every island on the GPU
      ASSERT_NE((*lent)->device_io_context(), nullptr);
      EXPECT_NE((*own)->device_io_context()->instance(), (*lent)->device_io_context()->instance());
      EXPECT_EQ((*lent)->device_io_context()->device(), host.device);
      for (int i = 0; i < 2; ++i) {  // interleaved: each call on its own instance's device
        EXPECT_LE(max_difference(run(**own, x), want), 1e-4f);
        EXPECT_LE(max_difference(run(**lent, x), want), 1e-4f);
      }
    }
    // Both instances go: hetsched's with its last user, the host's by the host.
    SharedGpuContextRegistry::get().unregister("private:0");
    SharedGpuContextRegistry::get().unregister("host:0");
    host.destroy();
    EXPECT_EQ(host.log->message_count(), 0u) << host.messages();
  }
}

}  // namespace
}  // namespace hetsched
