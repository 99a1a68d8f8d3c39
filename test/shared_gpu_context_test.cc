#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/device_info.h"
#include "shared_gpu/shared_gpu_context.h"
#include "shared_gpu/validation.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

using SharedGpuContextTest = testing::VkTest;
using CommandPoolTest = testing::VkTest;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

DeviceInfo fake_device(uint32_t index, std::string name, VkPhysicalDeviceType type, bool qualifies,
                       std::string reason = "") {
  DeviceInfo info;
  info.index = index;
  info.name = std::move(name);
  info.type = type;
  info.api_version = qualifies ? VK_API_VERSION_1_3 : VK_API_VERSION_1_1;
  info.qualifies = qualifies;
  info.reason = std::move(reason);
  return info;
}

using testing::ScopedEnv;

TEST(SelectDeviceTest, AutoPrefersDiscreteThenIntegratedThenCpu) {
  const std::vector<DeviceInfo> devices = {
      fake_device(0, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU, true),
      fake_device(1, "Mali-G715", VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, true),
      fake_device(2, "RTX 4090", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, true),
  };
  EXPECT_EQ(*select_device(devices, "auto"), 2u);
  EXPECT_EQ(*select_device(std::span(devices).first(2), "auto"), 1u);
  EXPECT_EQ(*select_device(std::span(devices).first(1), ""), 0u);
}

TEST(SelectDeviceTest, AutoSkipsDevicesThatDoNotQualify) {
  const std::vector<DeviceInfo> devices = {
      fake_device(0, "Old GPU", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, false, "Vulkan 1.1 < 1.2"),
      fake_device(1, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU, true),
  };
  EXPECT_EQ(*select_device(devices, "auto"), 1u);
}

TEST(SelectDeviceTest, NoQualifyingDeviceListsEachWithItsReason) {
  const std::vector<DeviceInfo> devices = {
      fake_device(0, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU, false, "Vulkan 1.1 < 1.2"),
      fake_device(1, "Odd GPU", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, false, "no compute queue"),
  };
  Result<uint32_t> chosen = select_device(devices, "auto");
  ASSERT_FALSE(chosen.is_ok());
  EXPECT_EQ(chosen.status().code(), StatusCode::kUnavailable);
  const std::string& message = chosen.status().message();
  EXPECT_TRUE(contains(message, "'llvmpipe' (cpu, Vulkan 1.1.0): Vulkan 1.1 < 1.2")) << message;
  EXPECT_TRUE(contains(message, "'Odd GPU' (discrete, Vulkan 1.1.0): no compute queue")) << message;
}

TEST(SelectDeviceTest, ByIndexAndByCaseInsensitiveSubstring) {
  const std::vector<DeviceInfo> devices = {
      fake_device(0, "llvmpipe (LLVM 15.0.6, 256 bits)", VK_PHYSICAL_DEVICE_TYPE_CPU, true),
      fake_device(1, "AMD Radeon RX 7600", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, true),
  };
  EXPECT_EQ(*select_device(devices, "0"), 0u);
  EXPECT_EQ(*select_device(devices, "1"), 1u);
  EXPECT_EQ(*select_device(devices, "LLVMPIPE"), 0u);
  EXPECT_EQ(*select_device(devices, "radeon"), 1u);
}

TEST(SelectDeviceTest, MissesAndUnqualifiedChoicesAreErrors) {
  const std::vector<DeviceInfo> devices = {
      fake_device(0, "llvmpipe", VK_PHYSICAL_DEVICE_TYPE_CPU, true),
      fake_device(1, "Old GPU", VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, false, "no timelineSemaphore feature"),
  };
  Result<uint32_t> out_of_range = select_device(devices, "7");
  EXPECT_EQ(out_of_range.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(out_of_range.status().message(), "'llvmpipe'")) << out_of_range.status().message();
  Result<uint32_t> no_match = select_device(devices, "nvidia");
  EXPECT_EQ(no_match.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(no_match.status().message(), "'nvidia'")) << no_match.status().message();
  Result<uint32_t> unqualified = select_device(devices, "1");
  EXPECT_EQ(unqualified.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(unqualified.status().message(), "Old GPU: no timelineSemaphore feature"))
      << unqualified.status().message();
  EXPECT_EQ(select_device({}, "auto").status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(select_device({}, "auto").status().message(), "mesa-vulkan-drivers"));
}

TEST(EnumerateDevicesTest, FindsLavapipeAndMarksItQualifying) {
  Result<std::vector<DeviceInfo>> devices = enumerate_devices();
  ASSERT_TRUE(devices.is_ok()) << devices.status().message();
  const DeviceInfo* lavapipe = nullptr;
  for (const DeviceInfo& device : *devices) {
    if (contains(device.name, "llvmpipe")) lavapipe = &device;
  }
  ASSERT_NE(lavapipe, nullptr) << format_devices(*devices);
  EXPECT_TRUE(lavapipe->qualifies) << lavapipe->reason;
  EXPECT_EQ(lavapipe->reason, "");
  EXPECT_EQ(lavapipe->type, VK_PHYSICAL_DEVICE_TYPE_CPU);
  EXPECT_GE(lavapipe->api_version, VK_API_VERSION_1_2);
  EXPECT_EQ(lavapipe->vendor_id, 0x10005u);  // VK_VENDOR_ID_MESA
  EXPECT_TRUE(lavapipe->features.timeline_semaphore);
  EXPECT_GE(lavapipe->compute_queue_family(), 0);
  ASSERT_FALSE(lavapipe->memory_heaps.empty());
  EXPECT_GT(lavapipe->memory_heaps[0].size, 0u);

  const std::string table = format_devices(*devices);
  EXPECT_TRUE(contains(table, "llvmpipe")) << table;
  EXPECT_TRUE(contains(table, "cpu")) << table;
  EXPECT_TRUE(contains(table, "yes")) << table;
  EXPECT_TRUE(contains(table, "queue family 0: ")) << table;
  EXPECT_TRUE(contains(table, "compute")) << table;
}

TEST(FormatTest, DriverVersionsFollowTheVendorEncoding) {
  EXPECT_EQ(format_driver_version(0x10005, VK_MAKE_API_VERSION(0, 22, 3, 6)), "22.3.6");
  // NVIDIA 535.104.5.0 packs as 10.8.8.6 bits.
  EXPECT_EQ(format_driver_version(0x10DE, (535u << 22) | (104u << 14) | (5u << 6)), "535.104.5.0");
}

TEST(NoDriverTest, MissingIcdIsUnavailableAndNamesTheDebianPackage) {
  // Point the loader at a driver list that does not exist.
  ScopedEnv drivers("VK_DRIVER_FILES", "/nonexistent/hetsched_no_icd.json");
  ScopedEnv legacy("VK_ICD_FILENAMES", "/nonexistent/hetsched_no_icd.json");
  GpuContextOptions options;
  Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::create(options);
  ASSERT_FALSE(context.is_ok());
  EXPECT_EQ(context.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(contains(context.status().message(), "mesa-vulkan-drivers")) << context.status().message();
  EXPECT_TRUE(contains(context.status().message(), "no Vulkan driver")) << context.status().message();
}

// A host application may open and close sessions, each with a context of
// its own, for as long as it runs. NVIDIA's driver, loaded again for every
// instance, ran out of static TLS after about 30 (instance.cc's
// pin_drivers); lavapipe never did, so this fails only on such a driver.
TEST(SharedGpuContextCycleTest, SixtyFourContextsMadeAndDestroyedInTurn) {
  for (int i = 0; i < 64; ++i) {
    Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::create(GpuContextOptions{});
    ASSERT_TRUE(context.is_ok()) << "context " << i << ": " << context.status().message();
  }
}

TEST_F(SharedGpuContextTest, SelectsDeviceByIndexAndBySubstring) {
  auto by_index = make_context("0");
  ASSERT_NE(by_index, nullptr);
  auto by_name = make_context("llvmpipe");
  ASSERT_NE(by_name, nullptr);
  EXPECT_TRUE(contains(std::string(by_name->device_name()), "llvmpipe"));
}

TEST_F(SharedGpuContextTest, UnmatchedSubstringListsTheDevicesSeen) {
  Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::create(options("no-such-gpu"));
  ASSERT_FALSE(context.is_ok());
  EXPECT_EQ(context.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(context.status().message(), "'no-such-gpu'")) << context.status().message();
  EXPECT_TRUE(contains(context.status().message(), "llvmpipe")) << context.status().message();
}

TEST_F(SharedGpuContextTest, MissingRequiredExtensionIsUnsupported) {
  GpuContextOptions opts = options();
  opts.required_device_extensions = {"VK_ARM_data_graph"};
  opts.optional_device_extensions = {"VK_ARM_tensors"};
  Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::create(opts);
  ASSERT_FALSE(context.is_ok());
  EXPECT_EQ(context.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(context.status().message(), "missing required extensions VK_ARM_data_graph"))
      << context.status().message();
}

TEST_F(SharedGpuContextTest, OwnsWhatItCreatedAndRecordsWhatItEnabled) {
  GpuContextOptions opts = options();
  opts.optional_device_extensions = {"VK_ARM_tensors", VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  Result<std::shared_ptr<SharedGpuContext>> made = SharedGpuContext::create(opts);
  ASSERT_TRUE(made.is_ok()) << made.status().message();
  auto context = *made;
  watch(*context);
  EXPECT_TRUE(context->owns_instance());
  EXPECT_TRUE(context->owns_device());
  EXPECT_TRUE(context->owns_timeline_semaphore());
  EXPECT_TRUE(context->features().timeline_semaphore);
  EXPECT_NE(context->pipeline_cache(), VK_NULL_HANDLE);
  EXPECT_FALSE(context->has_device_extension("VK_ARM_tensors"));  // lavapipe lacks it: optional, skipped
  EXPECT_TRUE(context->has_device_extension(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME));
  EXPECT_GE(context->properties().apiVersion, VK_API_VERSION_1_2);
  EXPECT_GT(context->limits().maxComputeWorkGroupCount[0], 0u);
  EXPECT_GT(context->memory_properties().memoryTypeCount, 0u);
  EXPECT_TRUE(context->wait_idle().is_ok());
}

TEST_F(SharedGpuContextTest, EnvironmentVariableTurnsValidationOn) {
  ScopedEnv validation("HETSCHED_VK_VALIDATION", "1");
  GpuContextOptions opts = options();
  opts.enable_validation = false;
  Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::create(opts);
  ASSERT_TRUE(context.is_ok()) << context.status().message();
  ASSERT_NE((*context)->validation_log(), nullptr);
  watch(**context);
}

TEST(ValidationLogTest, CountsMessagesButNotTheOnesTheLayerBlamesOnItself) {
  ValidationLog log;
  log.record(VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT, "Timeout waiting for timeline semaphore state to update.",
             "UNASSIGNED-VkSemaphore-state-timeout");
  EXPECT_EQ(log.message_count(), 0u);
  log.record(VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT, "a real error", "VUID-vkCmdDispatch-None-08606");
  log.record(VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT, "a warning");
  EXPECT_EQ(log.error_count(), 1u);
  EXPECT_EQ(log.warning_count(), 1u);
  EXPECT_EQ(log.messages(), (std::vector<std::string>{"error: a real error", "warning: a warning"}));
}

TEST_F(SharedGpuContextTest, NoValidationLogWithoutValidation) {
  ScopedEnv validation("HETSCHED_VK_VALIDATION", "0");
  GpuContextOptions opts = options();
  opts.enable_validation = false;
  Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::create(opts);
  ASSERT_TRUE(context.is_ok()) << context.status().message();
  EXPECT_EQ((*context)->validation_log(), nullptr);
  EXPECT_EQ((*context)->validation_message_count(), 0u);
}

TEST_F(SharedGpuContextTest, ValidationCountsMisuseEvenDuringTeardown) {
  // Deliberately leaks a semaphore: vkDestroyDevice reports it, after the
  // context is gone, into the log the test still holds. Not watch()ed, since
  // this context is meant to be dirty.
  std::shared_ptr<const ValidationLog> log;
  {
    Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::create(options());
    ASSERT_TRUE(context.is_ok()) << context.status().message();
    log = (*context)->validation_log();
    ASSERT_NE(log, nullptr);
    VkSemaphoreCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    VkSemaphore leaked = VK_NULL_HANDLE;
    ASSERT_EQ(vkCreateSemaphore((*context)->device(), &info, nullptr, &leaked), VK_SUCCESS);
    EXPECT_EQ((*context)->validation_message_count(), 0u);
  }
  // Exactly one: the instance-creation messenger and the persistent one
  // must not both report it.
  EXPECT_EQ(log->error_count(), 1u);
  bool named = false;
  for (const std::string& message : log->messages()) named = named || contains(message, "VkSemaphore");
  EXPECT_TRUE(named);
}

TEST_F(CommandPoolTest, TwoDelegatesGetDistinctWorkingPools) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  Result<CommandPool> vulkan_pool = CommandPool::create(*context);
  Result<CommandPool> vgf_pool = CommandPool::create(*context);
  ASSERT_TRUE(vulkan_pool.is_ok() && vgf_pool.is_ok());
  EXPECT_NE(vulkan_pool->handle(), vgf_pool->handle());
  Result<Buffer> buffer = Buffer::create(*context, 32, VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                         MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(buffer.is_ok()) << buffer.status().message();
  std::vector<uint32_t> out(8);
  for (auto [pool, fill] : {std::pair{&*vulkan_pool, 0xA1A1A1A1u}, std::pair{&*vgf_pool, 0xB2B2B2B2u}}) {
    const Status filled =
        pool->run_one_shot([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, buffer->handle(), 0, 32, fill); });
    ASSERT_TRUE(filled.is_ok()) << filled.message();
    ASSERT_TRUE(readback(*pool, *buffer, std::as_writable_bytes(std::span(out))).is_ok());
    EXPECT_EQ(out, std::vector<uint32_t>(8, fill));
  }
}

TEST_F(CommandPoolTest, RawPoolFromContextIsOwnedByTheCaller) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  Result<VkCommandPool> a = context->create_command_pool();
  Result<VkCommandPool> b = context->create_command_pool();
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_NE(*a, *b);
  vkDestroyCommandPool(context->device(), *a, nullptr);
  vkDestroyCommandPool(context->device(), *b, nullptr);
}

TEST_F(CommandPoolTest, PoolKeepsContextAliveWhenDroppedAfterIt) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  std::weak_ptr<SharedGpuContext> observer = context;
  Result<CommandPool> pool = CommandPool::create(*context);
  ASSERT_TRUE(pool.is_ok());
  context.reset();
  ASSERT_FALSE(observer.expired());
  // Still usable with only the pool holding the context.
  const Status ran = pool->run_one_shot([](VkCommandBuffer) {});
  EXPECT_TRUE(ran.is_ok()) << ran.message();
  *pool = CommandPool();
  EXPECT_TRUE(observer.expired());
}

TEST_F(CommandPoolTest, PoolsOfTwoThreadsSubmitConcurrently) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  constexpr int kSubmitsPerThread = 50;
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      Result<CommandPool> pool = CommandPool::create(*context);
      if (!pool.is_ok()) {
        errors[t] = pool.status().message();
        return;
      }
      for (int i = 0; i < kSubmitsPerThread && errors[t].empty(); ++i) {
        const Status ran = pool->run_one_shot([](VkCommandBuffer) {});
        if (!ran.is_ok()) errors[t] = ran.message();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(context->timeline().last_value(), 2u * kSubmitsPerThread);
  EXPECT_EQ(*context->timeline().current_value(), 2u * kSubmitsPerThread);
}

}  // namespace
}  // namespace hetsched
