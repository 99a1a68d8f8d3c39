#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/device_info.h"
#include "shared_gpu/instance.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "shared_gpu/validation.h"
#include "shared_gpu/vk_loader.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

using namespace std::chrono_literals;

// Runs `body` on `threads` threads and joins them; aborts the test binary if
// they have not all finished within `limit` (a deadlock must not hang CI).
template <typename Body>
void run_threads_with_timeout(int threads, std::chrono::seconds limit, Body body) {
  std::mutex mutex;
  std::condition_variable done_cv;
  int done = 0;
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back([&, i] {
      body(i);
      std::lock_guard lock(mutex);
      ++done;
      done_cv.notify_all();
    });
  }
  {
    std::unique_lock lock(mutex);
    if (!done_cv.wait_for(lock, limit, [&] { return done == threads; })) {
      ADD_FAILURE() << "threads did not finish within " << limit.count() << " s (deadlock?)";
      std::abort();
    }
  }
  for (std::thread& worker : workers) worker.join();
}

TEST(ContextModeTest, ParsesEveryNameAndRoundTrips) {
  for (const char* name : {"lookup_only", "lookup_or_create", "create_only", "disabled"}) {
    Result<ContextMode> mode = parse_context_mode(name);
    ASSERT_TRUE(mode.is_ok()) << name;
    EXPECT_EQ(context_mode_name(*mode), name);
  }
  EXPECT_EQ(*parse_context_mode("lookup_or_create"), ContextMode::kLookupOrCreate);
  const Result<ContextMode> bad = parse_context_mode("share");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("lookup_only, lookup_or_create, create_only, disabled"), std::string::npos);
}

TEST(ContextModeTest, KeyIsTokenColonGroup) {
  EXPECT_EQ(make_context_key("scene0", 2), "scene0:2");
  EXPECT_EQ((ContextSpec{"vgf_vk_unified_e2e", 7, ContextMode::kLookupOnly}).key(), "vgf_vk_unified_e2e:7");
  EXPECT_EQ(ContextSpec{}.key(), "default:0");
}

class SharedGpuRegistryTest : public testing::VkTest {
 protected:
  // A factory that makes a validated context and counts its calls.
  ContextFactory counting_factory(std::atomic<int>& calls) {
    return [this, &calls]() -> Result<std::shared_ptr<SharedGpuContext>> {
      ++calls;
      HS_ASSIGN_OR_RETURN(auto context, SharedGpuContext::create(options()));
      std::lock_guard lock(watch_mutex_);
      watch(*context);
      return context;
    };
  }

  SharedGpuContextRegistry& registry() { return SharedGpuContextRegistry::get(); }

 private:
  std::mutex watch_mutex_;
};

TEST_F(SharedGpuRegistryTest, LookupOnlyMissNamesTheKeyWithoutCreating) {
  std::atomic<int> calls = 0;
  Result<ResolvedContext> resolved =
      registry().resolve({"scene0", 2, ContextMode::kLookupOnly}, counting_factory(calls));
  ASSERT_FALSE(resolved.is_ok());
  EXPECT_EQ(resolved.status().code(), StatusCode::kNotFound);
  EXPECT_NE(resolved.status().message().find("'scene0:2'"), std::string::npos) << resolved.status().message();
  EXPECT_EQ(calls, 0);
}

TEST_F(SharedGpuRegistryTest, LookupOrCreateCreatesOnceThenReuses) {
  std::atomic<int> calls = 0;
  Result<ResolvedContext> first = registry().resolve({"scene0", 1, ContextMode::kLookupOrCreate}, counting_factory(calls));
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->key, "scene0:1");
  Result<ResolvedContext> second = registry().resolve({"scene0", 1, ContextMode::kLookupOrCreate}, counting_factory(calls));
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  EXPECT_FALSE(second->created);
  EXPECT_EQ(second->context, first->context);
  EXPECT_EQ(calls, 1);
  // A lookup_only delegate now finds it too.
  Result<ResolvedContext> third = registry().resolve({"scene0", 1, ContextMode::kLookupOnly}, nullptr);
  ASSERT_TRUE(third.is_ok()) << third.status().message();
  EXPECT_EQ(third->context, first->context);
  EXPECT_EQ(registry().keys(), std::vector<std::string>{"scene0:1"});
}

TEST_F(SharedGpuRegistryTest, GroupsSeparateContextsOfOneToken) {
  std::atomic<int> calls = 0;
  Result<ResolvedContext> a = registry().resolve({"scene0", 1, ContextMode::kLookupOrCreate}, counting_factory(calls));
  Result<ResolvedContext> b = registry().resolve({"scene0", 2, ContextMode::kLookupOrCreate}, counting_factory(calls));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_NE(a->context, b->context);
  EXPECT_EQ(calls, 2);
}

TEST_F(SharedGpuRegistryTest, CreateOnlyRegistersAndRefusesATakenKey) {
  std::atomic<int> calls = 0;
  Result<ResolvedContext> first = registry().resolve({"owned", 0, ContextMode::kCreateOnly}, counting_factory(calls));
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(registry().lookup("owned:0"), first->context);
  Result<ResolvedContext> second = registry().resolve({"owned", 0, ContextMode::kCreateOnly}, counting_factory(calls));
  ASSERT_FALSE(second.is_ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(second.status().message().find("'owned:0'"), std::string::npos) << second.status().message();
  EXPECT_EQ(calls, 1);
}

TEST_F(SharedGpuRegistryTest, DisabledMakesPrivateContextsThatAreNeverRegistered) {
  std::atomic<int> calls = 0;
  Result<ResolvedContext> a = registry().resolve({"private", 0, ContextMode::kDisabled}, counting_factory(calls));
  Result<ResolvedContext> b = registry().resolve({"private", 0, ContextMode::kDisabled}, counting_factory(calls));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_TRUE(a->created);
  EXPECT_TRUE(b->created);
  EXPECT_NE(a->context, b->context);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(registry().lookup("private:0"), nullptr);
  EXPECT_TRUE(registry().keys().empty());
}

TEST_F(SharedGpuRegistryTest, DuplicateRegistrationIsRefused) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  ASSERT_TRUE(registry().register_context("host:3", context).is_ok());
  const Status again = registry().register_context("host:3", context);
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.message().find("'host:3'"), std::string::npos) << again.message();
}

TEST_F(SharedGpuRegistryTest, FactoryFailureRegistersNothingAndLaterCallsRetry) {
  const ContextFactory failing = []() -> Result<std::shared_ptr<SharedGpuContext>> {
    return unavailable("no GPU today");
  };
  Result<ResolvedContext> failed = registry().resolve({"flaky", 0, ContextMode::kLookupOrCreate}, failing);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(failed.status().message(), "failed to create shared GPU context 'flaky:0': no GPU today");
  EXPECT_EQ(registry().lookup("flaky:0"), nullptr);
  std::atomic<int> calls = 0;
  Result<ResolvedContext> retried = registry().resolve({"flaky", 0, ContextMode::kLookupOrCreate}, counting_factory(calls));
  ASSERT_TRUE(retried.is_ok()) << retried.status().message();
  EXPECT_TRUE(retried->created);
}

TEST_F(SharedGpuRegistryTest, ConcurrentLookupOrCreateCreatesExactlyOne) {
  constexpr int kThreads = 8;
  std::atomic<int> calls = 0;
  std::atomic<int> created = 0;
  std::vector<std::shared_ptr<SharedGpuContext>> seen(kThreads);
  std::vector<std::string> errors(kThreads);
  const ContextFactory factory = counting_factory(calls);
  std::atomic<int> ready = 0;
  run_threads_with_timeout(kThreads, 120s, [&](int i) {
    // Start together, so the calls really race.
    ++ready;
    while (ready < kThreads) std::this_thread::yield();
    Result<ResolvedContext> resolved = registry().resolve({"race", 0, ContextMode::kLookupOrCreate}, factory);
    if (!resolved.is_ok()) {
      errors[i] = resolved.status().message();
      return;
    }
    if (resolved->created) ++created;
    seen[i] = resolved->context;
  });
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(created, 1);
  for (const auto& context : seen) EXPECT_EQ(context, seen[0]);
  EXPECT_NE(seen[0], nullptr);
}

TEST_F(SharedGpuRegistryTest, DifferentKeysAreCreatedInParallel) {
  // Key A's factory waits until key B's factory has started. Were creation
  // serialised by one registry-wide lock, B could not start and A would time
  // out.
  std::mutex mutex;
  std::condition_variable cv;
  bool b_started = false;
  std::atomic<int> calls = 0;
  const ContextFactory make = counting_factory(calls);
  const ContextFactory factory_a = [&]() -> Result<std::shared_ptr<SharedGpuContext>> {
    std::unique_lock lock(mutex);
    if (!cv.wait_for(lock, 30s, [&] { return b_started; })) return unavailable("B never started");
    lock.unlock();
    return make();
  };
  const ContextFactory factory_b = [&]() -> Result<std::shared_ptr<SharedGpuContext>> {
    {
      std::lock_guard lock(mutex);
      b_started = true;
    }
    cv.notify_all();
    return make();
  };
  std::vector<std::string> errors(2);
  run_threads_with_timeout(2, 120s, [&](int i) {
    Result<ResolvedContext> resolved = registry().resolve({i == 0 ? "a" : "b", 0, ContextMode::kLookupOrCreate},
                                                          i == 0 ? factory_a : factory_b);
    if (!resolved.is_ok()) errors[i] = resolved.status().message();
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(calls, 2);
}

TEST_F(SharedGpuRegistryTest, ContextOutlivesItsEntryWhileHeldAndDiesWithTheLastHolder) {
  std::atomic<int> calls = 0;
  Result<ResolvedContext> resolved = registry().resolve({"life", 0, ContextMode::kLookupOrCreate}, counting_factory(calls));
  ASSERT_TRUE(resolved.is_ok()) << resolved.status().message();
  std::shared_ptr<SharedGpuContext> held = resolved->context;
  resolved->context.reset();
  std::weak_ptr<SharedGpuContext> observer = held;

  registry().clear_for_testing();
  EXPECT_EQ(registry().lookup("life:0"), nullptr);
  ASSERT_FALSE(observer.expired());

  // The device still works: fill a buffer on the GPU and read it back.
  {
    Result<CommandPool> pool = CommandPool::create(*held);
    ASSERT_TRUE(pool.is_ok()) << pool.status().message();
    Result<Buffer> buffer = Buffer::create(*held, 64, VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                           MemoryUsage::kDeviceLocal);
    ASSERT_TRUE(buffer.is_ok()) << buffer.status().message();
    const Status filled = pool->run_one_shot(
        [&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, buffer->handle(), 0, VK_WHOLE_SIZE, 0x5A5A5A5Au); });
    ASSERT_TRUE(filled.is_ok()) << filled.message();
    std::vector<uint32_t> out(16);
    ASSERT_TRUE(readback(*pool, *buffer, std::as_writable_bytes(std::span(out))).is_ok());
    EXPECT_EQ(out, std::vector<uint32_t>(16, 0x5A5A5A5Au));
  }
  held.reset();
  EXPECT_TRUE(observer.expired());
}

// The host makes its own instance and device (validated, with its own
// messenger), lends them to hetsched, and destroys them itself afterwards.
TEST_F(SharedGpuRegistryTest, HostRegisteredBorrowedContextIsNeverDestroyed) {
  ValidationLog host_log;
  InstanceOptions instance_options;
  instance_options.app_name = "host application";
  instance_options.enable_validation = true;
  instance_options.validation_log = &host_log;
  Result<VkInstance> instance = create_vulkan_instance(instance_options);
  ASSERT_TRUE(instance.is_ok()) << instance.status().message();
  Result<DebugMessenger> messenger = DebugMessenger::create(*instance, &host_log);
  ASSERT_TRUE(messenger.is_ok()) << messenger.status().message();
  Result<std::vector<VkPhysicalDevice>> physical = list_physical_devices(*instance);
  ASSERT_TRUE(physical.is_ok() && !physical->empty());
  std::vector<DeviceInfo> infos;
  for (size_t i = 0; i < physical->size(); ++i) infos.push_back(inspect_device(*instance, (*physical)[i], i));
  Result<uint32_t> chosen = select_device(infos, "auto");
  ASSERT_TRUE(chosen.is_ok()) << chosen.status().message();
  const uint32_t family = static_cast<uint32_t>(infos[*chosen].compute_queue_family());

  VkPhysicalDeviceVulkan12Features v12{};
  v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  v12.timelineSemaphore = VK_TRUE;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{};
  queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue_info.queueFamilyIndex = family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{};
  device_info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  device_info.pNext = &v12;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  VkDevice device = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateDevice((*physical)[*chosen], &device_info, nullptr, &device), VK_SUCCESS);
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);
  Result<std::unique_ptr<TimelineSemaphore>> host_timeline =
      TimelineSemaphore::create(device, volk_timeline_functions());
  ASSERT_TRUE(host_timeline.is_ok()) << host_timeline.status().message();

  {
    SharedGpuContextCreateInfo info;
    info.instance = *instance;
    info.physical_device = (*physical)[*chosen];
    info.device = device;
    info.queue = queue;
    info.queue_family_index = family;
    info.timeline_semaphore = (*host_timeline)->handle();
    Result<std::shared_ptr<SharedGpuContext>> borrowed = SharedGpuContext::borrow(info);
    ASSERT_TRUE(borrowed.is_ok()) << borrowed.status().message();
    EXPECT_FALSE((*borrowed)->owns_instance());
    EXPECT_FALSE((*borrowed)->owns_device());
    EXPECT_FALSE((*borrowed)->owns_timeline_semaphore());
    ASSERT_TRUE(registry().register_context("host:0", *borrowed).is_ok());

    Result<ResolvedContext> resolved = registry().resolve({"host", 0, ContextMode::kLookupOnly}, nullptr);
    ASSERT_TRUE(resolved.is_ok()) << resolved.status().message();
    EXPECT_FALSE(resolved->created);
    EXPECT_EQ(resolved->context->device(), device);
    // A delegate uses it: one submit through the shared timeline.
    Result<uint64_t> signalled = resolved->context->submit(GpuSubmit{});
    ASSERT_TRUE(signalled.is_ok()) << signalled.status().message();
    EXPECT_TRUE(resolved->context->wait(*signalled).is_ok());
  }
  registry().clear_for_testing();

  // Everything the host lent is intact: the device takes new work, the
  // semaphore still counts.
  EXPECT_EQ(vkDeviceWaitIdle(device), VK_SUCCESS);
  EXPECT_TRUE((*host_timeline)->signal_from_host(100).is_ok());
  EXPECT_EQ(*(*host_timeline)->current_value(), 100u);
  host_timeline->reset();
  vkDestroyDevice(device, nullptr);
  messenger->reset();
  vkDestroyInstance(*instance, nullptr);
  // Leaked children (say, a pipeline cache the context forgot) would have
  // been reported by vkDestroyDevice.
  EXPECT_EQ(host_log.message_count(), 0u);
  for (const std::string& message : host_log.messages()) ADD_FAILURE() << message;
}

}  // namespace
}  // namespace hetsched
