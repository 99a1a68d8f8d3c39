#include <gtest/gtest.h>

#include "sync/step_sync.h"
#include "sync/sync_mode.h"

namespace hetsched {
namespace {

TEST(SyncModeTest, ParsesEveryNameAndRoundTrips) {
  for (const char* name : {"timeline", "queue_wait_idle", "none"}) {
    Result<SyncMode> mode = parse_sync_mode(name);
    ASSERT_TRUE(mode.is_ok()) << name;
    EXPECT_EQ(sync_mode_name(*mode), name);
  }
  EXPECT_EQ(*parse_sync_mode("timeline"), SyncMode::kTimeline);
  EXPECT_EQ(*parse_sync_mode("queue_wait_idle"), SyncMode::kQueueWaitIdle);
  EXPECT_EQ(*parse_sync_mode("none"), SyncMode::kNone);
}

TEST(SyncModeTest, RejectsUnknownNameListingTheAcceptedOnes) {
  Result<SyncMode> mode = parse_sync_mode("fence");
  ASSERT_FALSE(mode.is_ok());
  EXPECT_EQ(mode.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mode.status().message().find("'fence'"), std::string::npos);
  EXPECT_NE(mode.status().message().find("timeline, queue_wait_idle, none"), std::string::npos);
}

TEST(StepSyncTest, TimelineWaitsOnDeviceAndSignals) {
  EXPECT_EQ(plan_gpu_step(SyncMode::kTimeline, 0), (GpuStepSync{0, true, false}));
  EXPECT_EQ(plan_gpu_step(SyncMode::kTimeline, 41), (GpuStepSync{41, true, false}));
}

TEST(StepSyncTest, TimelineHostWaitsBeforeCpuStepsAndAtTheEnd) {
  EXPECT_EQ(plan_host_wait(SyncMode::kTimeline, HostWaitPoint::kBeforeCpuStep, 7), 7u);
  EXPECT_EQ(plan_host_wait(SyncMode::kTimeline, HostWaitPoint::kEndOfRun, 9), 9u);
  EXPECT_EQ(plan_host_wait(SyncMode::kTimeline, HostWaitPoint::kEndOfRun, 0), 0u);
}

TEST(StepSyncTest, QueueWaitIdleIdlesAfterEveryStepAndNeverWaitsOnTheTimeline) {
  EXPECT_EQ(plan_gpu_step(SyncMode::kQueueWaitIdle, 0), (GpuStepSync{0, false, true}));
  EXPECT_EQ(plan_gpu_step(SyncMode::kQueueWaitIdle, 12), (GpuStepSync{0, false, true}));
  EXPECT_EQ(plan_host_wait(SyncMode::kQueueWaitIdle, HostWaitPoint::kBeforeCpuStep, 12), 0u);
  EXPECT_EQ(plan_host_wait(SyncMode::kQueueWaitIdle, HostWaitPoint::kEndOfRun, 12), 0u);
}

TEST(StepSyncTest, NoneSkipsWaitsBetweenStepsButWaitsOnceAtTheEnd) {
  EXPECT_EQ(plan_gpu_step(SyncMode::kNone, 5), (GpuStepSync{0, true, false}));
  EXPECT_EQ(plan_host_wait(SyncMode::kNone, HostWaitPoint::kBeforeCpuStep, 5), 0u);
  EXPECT_EQ(plan_host_wait(SyncMode::kNone, HostWaitPoint::kEndOfRun, 5), 5u);
}

}  // namespace
}  // namespace hetsched
