#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "shared_gpu/vk_check.h"
#include "shared_gpu/vk_loader.h"
#include "sync/timeline_semaphore.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

using namespace std::chrono_literals;
using TimelineSemaphoreTest = testing::VkTest;

std::unique_ptr<TimelineSemaphore> make_timeline(const SharedGpuContext& context, uint64_t initial = 0) {
  Result<std::unique_ptr<TimelineSemaphore>> timeline =
      TimelineSemaphore::create(context.device(), volk_timeline_functions(), initial);
  EXPECT_TRUE(timeline.is_ok()) << timeline.status().message();
  return timeline.is_ok() ? std::move(timeline).value() : nullptr;
}

// One batch with no command buffers that waits for `wait` (0: none) and
// signals `signal` on `semaphore`, submitted under the context's queue lock.
Status submit_empty(const SharedGpuContext& context, VkSemaphore semaphore, uint64_t wait, uint64_t signal) {
  VkTimelineSemaphoreSubmitInfo timeline_info{};
  timeline_info.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline_info.waitSemaphoreValueCount = wait != 0 ? 1 : 0;
  timeline_info.pWaitSemaphoreValues = &wait;
  timeline_info.signalSemaphoreValueCount = 1;
  timeline_info.pSignalSemaphoreValues = &signal;
  const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &timeline_info;
  submit.waitSemaphoreCount = wait != 0 ? 1 : 0;
  submit.pWaitSemaphores = &semaphore;
  submit.pWaitDstStageMask = &stage;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &semaphore;
  auto lock = context.lock_queue();
  HS_VK_RETURN_IF_ERROR(vkQueueSubmit(context.queue(), 1, &submit, VK_NULL_HANDLE));
  return Status::ok();
}

TEST_F(TimelineSemaphoreTest, HostSignalThenWaitSucceeds) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  auto timeline = make_timeline(*context);
  ASSERT_NE(timeline, nullptr);
  EXPECT_TRUE(timeline->owns_handle());
  ASSERT_TRUE(timeline->signal_from_host(5).is_ok());
  const Status waited = timeline->wait(5, 1s);
  EXPECT_TRUE(waited.is_ok()) << waited.message();
  Result<uint64_t> value = timeline->current_value();
  ASSERT_TRUE(value.is_ok());
  EXPECT_EQ(*value, 5u);
  // Host signals move the allocator past them.
  EXPECT_EQ(timeline->next_value(), 6u);
}

TEST_F(TimelineSemaphoreTest, WaitTimesOutQuicklyNamingValues) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  auto timeline = make_timeline(*context, 2);
  ASSERT_NE(timeline, nullptr);
  const auto start = std::chrono::steady_clock::now();
  const Status waited = timeline->wait(3, 20ms);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(waited.code(), StatusCode::kUnavailable);
  EXPECT_NE(waited.message().find("ms waiting for timeline value 3 (current 2)"), std::string::npos)
      << waited.message();
  EXPECT_GE(elapsed, 15ms);
  EXPECT_LT(elapsed, 2s);
}

// The sleeping phase ends at spin_from, then polling sees a signal another
// thread makes during it; a value never signalled still times out by name
// after the spin.
TEST_F(TimelineSemaphoreTest, SpinningWaitSeesLateSignalAndStillTimesOut) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  auto timeline = make_timeline(*context);
  ASSERT_NE(timeline, nullptr);
  const auto start = std::chrono::steady_clock::now();
  std::thread signaller([&] {
    std::this_thread::sleep_for(30ms);
    EXPECT_TRUE(timeline->signal_from_host(1).is_ok());
  });
  const Status waited = timeline->wait_spinning_from(1, start + 10ms, 2s, 5s);
  signaller.join();
  EXPECT_TRUE(waited.is_ok()) << waited.message();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 25ms);

  const Status never = timeline->wait_spinning_from(2, std::chrono::steady_clock::now(), 1ms, 20ms);
  EXPECT_EQ(never.code(), StatusCode::kUnavailable);
  EXPECT_NE(never.message().find("ms waiting for timeline value 2 (current 1)"), std::string::npos)
      << never.message();
}

TEST_F(TimelineSemaphoreTest, SignalNotAboveCurrentIsRejected) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  auto timeline = make_timeline(*context, 4);
  ASSERT_NE(timeline, nullptr);
  const Status signalled = timeline->signal_from_host(4);
  EXPECT_EQ(signalled.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(signalled.message().find("not above the current value 4"), std::string::npos) << signalled.message();
}

TEST_F(TimelineSemaphoreTest, GpuSignalFromEmptySubmitWakesHostWait) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  auto timeline = make_timeline(*context);
  ASSERT_NE(timeline, nullptr);
  const uint64_t value = timeline->next_value();
  EXPECT_EQ(value, 1u);
  ASSERT_TRUE(submit_empty(*context, timeline->handle(), 0, value).is_ok());
  const Status waited = timeline->wait(value, 10s);
  EXPECT_TRUE(waited.is_ok()) << waited.message();
  EXPECT_EQ(*timeline->current_value(), 1u);
}

TEST_F(TimelineSemaphoreTest, DeviceWaitHoldsBackSignalUntilHostSignals) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  auto timeline = make_timeline(*context);
  ASSERT_NE(timeline, nullptr);
  // Wait-before-signal: the batch waits for 1, which only the host provides.
  ASSERT_TRUE(submit_empty(*context, timeline->handle(), 1, 2).is_ok());
  EXPECT_EQ(timeline->wait(2, 50ms).code(), StatusCode::kUnavailable);
  EXPECT_EQ(*timeline->current_value(), 0u);
  ASSERT_TRUE(timeline->signal_from_host(1).is_ok());
  const Status waited = timeline->wait(2, 10s);
  EXPECT_TRUE(waited.is_ok()) << waited.message();
  EXPECT_EQ(*timeline->current_value(), 2u);
}

TEST_F(TimelineSemaphoreTest, ContextSubmitSignalsIncreasingValues) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  GpuSubmit batch;
  Result<uint64_t> first = context->submit(batch);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  batch.wait_value = *first;
  Result<uint64_t> second = context->submit(batch);
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  EXPECT_EQ(*second, *first + 1);
  EXPECT_TRUE(context->wait(*second).is_ok());
  EXPECT_EQ(*context->timeline().current_value(), *second);
}

TEST_F(TimelineSemaphoreTest, MarkedFailedMakesEveryLaterCallFail) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  auto timeline = make_timeline(*context);
  ASSERT_NE(timeline, nullptr);
  timeline->mark_failed(unavailable("vkQueueSubmit: VK_ERROR_DEVICE_LOST"));
  timeline->mark_failed(internal_error("a later failure is not recorded"));
  EXPECT_EQ(timeline->wait(0, 1s).message(), "vkQueueSubmit: VK_ERROR_DEVICE_LOST");
  EXPECT_EQ(timeline->signal_from_host(1).message(), "vkQueueSubmit: VK_ERROR_DEVICE_LOST");
  EXPECT_EQ(timeline->current_value().status().message(), "vkQueueSubmit: VK_ERROR_DEVICE_LOST");
  EXPECT_EQ(timeline->failure().code(), StatusCode::kUnavailable);
}

TEST_F(TimelineSemaphoreTest, WrappedSemaphoreIsNotDestroyed) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  VkSemaphoreTypeCreateInfo type_info{};
  type_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type_info.initialValue = 10;
  VkSemaphoreCreateInfo create_info{};
  create_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  create_info.pNext = &type_info;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  ASSERT_EQ(vkCreateSemaphore(context->device(), &create_info, nullptr, &semaphore), VK_SUCCESS);
  {
    Result<std::unique_ptr<TimelineSemaphore>> wrapped =
        TimelineSemaphore::wrap(context->device(), semaphore, volk_timeline_functions());
    ASSERT_TRUE(wrapped.is_ok()) << wrapped.status().message();
    EXPECT_FALSE((*wrapped)->owns_handle());
    EXPECT_EQ((*wrapped)->next_value(), 11u);
  }
  // Still alive after the wrapper is gone: signal it, then destroy it ourselves.
  VkSemaphoreSignalInfo signal{};
  signal.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  signal.semaphore = semaphore;
  signal.value = 11;
  EXPECT_EQ(vkSignalSemaphore(context->device(), &signal), VK_SUCCESS);
  vkDestroySemaphore(context->device(), semaphore, nullptr);
}

TEST_F(TimelineSemaphoreTest, NextValueIsUniqueAcrossThreads) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  auto timeline = make_timeline(*context);
  ASSERT_NE(timeline, nullptr);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 1000;
  std::vector<std::vector<uint64_t>> values(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) values[t].push_back(timeline->next_value());
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<uint64_t> all;
  for (const auto& list : values) {
    EXPECT_TRUE(std::is_sorted(list.begin(), list.end()));
    all.insert(list.begin(), list.end());
  }
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(*all.begin(), 1u);
  EXPECT_EQ(*all.rbegin(), static_cast<uint64_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace hetsched
