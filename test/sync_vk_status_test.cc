#include <gtest/gtest.h>

#include "shared_gpu/vk_check.h"

namespace hetsched {
namespace {

VkResult fake_create_buffer(int, int) { return VK_ERROR_OUT_OF_DEVICE_MEMORY; }
VkResult fake_success() { return VK_SUCCESS; }

Status call_failing() {
  HS_VK_RETURN_IF_ERROR(fake_create_buffer(1, 2));
  return internal_error("not reached");
}

Result<int> call_succeeding() {
  HS_VK_RETURN_IF_ERROR(fake_success());
  return 3;
}

TEST(VkStatusTest, MacroNamesTheFailingCallAndResult) {
  const Status status = call_failing();
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(status.message(), "fake_create_buffer: VK_ERROR_OUT_OF_DEVICE_MEMORY");
}

TEST(VkStatusTest, MacroFallsThroughOnSuccess) {
  Result<int> value = call_succeeding();
  ASSERT_TRUE(value.is_ok());
  EXPECT_EQ(*value, 3);
}

TEST(VkStatusTest, MapsResultsToCodes) {
  EXPECT_TRUE(vk_status(VK_SUCCESS, "vkX").is_ok());
  EXPECT_EQ(vk_status(VK_ERROR_DEVICE_LOST, "vkQueueSubmit").message(),
            "vkQueueSubmit: VK_ERROR_DEVICE_LOST (device lost)");
  EXPECT_EQ(vk_status(VK_ERROR_DEVICE_LOST, "vkQueueSubmit").code(), StatusCode::kUnavailable);
  EXPECT_EQ(vk_status(VK_ERROR_EXTENSION_NOT_PRESENT, "vkCreateDevice").code(), StatusCode::kUnsupported);
  EXPECT_EQ(vk_status(VK_ERROR_INCOMPATIBLE_DRIVER, "vkCreateInstance").code(), StatusCode::kUnsupported);
  EXPECT_EQ(vk_status(VK_ERROR_UNKNOWN, "vkCreateBuffer").code(), StatusCode::kInternal);
  EXPECT_EQ(vk_status(VK_TIMEOUT, "vkWaitSemaphores").message(), "vkWaitSemaphores: VK_TIMEOUT");
}

TEST(VkStatusTest, NamesUnknownResultsByNumber) {
  EXPECT_EQ(vk_result_name(static_cast<VkResult>(-12345)), "VkResult(-12345)");
  EXPECT_EQ(vk_result_name(VK_ERROR_OUT_OF_POOL_MEMORY), "VK_ERROR_OUT_OF_POOL_MEMORY");
}

}  // namespace
}  // namespace hetsched
