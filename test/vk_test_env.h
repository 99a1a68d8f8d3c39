// Shared fixture for tests that use a real Vulkan device (lavapipe on CI).
//
// Every context a test makes through make_context() has validation on, and
// TearDown asserts that its validation log stayed empty — including the
// messages emitted while the device and instance were destroyed, since the
// log outlives the context. Header-only: test/CMakeLists compiles only
// test_util.cc beside each test.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "shared_gpu/shared_gpu_context.h"
#include "shared_gpu/shared_gpu_registry.h"

namespace hetsched::testing {

// What a host application would hand SharedGpuContext::borrow to lend
// `host`'s device, with the features `host` enabled (tests then switch one
// off to see a delegate refuse what needs it).
inline SharedGpuContextCreateInfo lend_info(const SharedGpuContext& host) {
  SharedGpuContextCreateInfo info;
  info.instance = host.instance();
  info.physical_device = host.physical_device();
  info.device = host.device();
  info.queue = host.queue();
  info.queue_family_index = host.queue_family_index();
  info.enabled_features = host.features();
  return info;
}

class VkTest : public ::testing::Test {
 protected:
  // A validated context on `device` ("auto", an index, a name substring).
  // Fails the test (and returns null) when none can be made.
  std::shared_ptr<SharedGpuContext> make_context(const std::string& device = "auto") {
    Result<std::shared_ptr<SharedGpuContext>> context = SharedGpuContext::create(options(device));
    EXPECT_TRUE(context.is_ok()) << context.status().message();
    if (!context.is_ok()) return nullptr;
    watch(**context);
    return *context;
  }

  // The options make_context uses, for tests that create contexts themselves
  // (through the registry); pass the result to watch().
  static GpuContextOptions options(const std::string& device = "auto") {
    GpuContextOptions options;
    options.device = device;
    options.enable_validation = validation_wanted();
    options.app_name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    return options;
  }

  // HETSCHED_TEST_VALIDATION=off runs the tests without the validation
  // layer: for a machine that lacks it (the GPU machine, where the tests
  // that need a real GPU's features run). CI always validates.
  static bool validation_wanted() {
    const char* env = std::getenv("HETSCHED_TEST_VALIDATION");
    return env == nullptr || std::string(env) != "off";
  }

  // Adds `context`'s validation log to the teardown check.
  void watch(const SharedGpuContext& context) {
    if (!validation_wanted()) return;
    ASSERT_NE(context.validation_log(), nullptr) << "context made without validation";
    logs_.push_back(context.validation_log());
  }

  void TearDown() override {
    // Contexts the registry still holds are destroyed here, so their
    // teardown messages are counted too.
    SharedGpuContextRegistry::get().clear_for_testing();
    for (const auto& log : logs_) {
      EXPECT_EQ(log->message_count(), 0u) << join(log->messages());
    }
  }

 private:
  static std::string join(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& line : lines) out += line + "\n";
    return out;
  }

  std::vector<std::shared_ptr<const ValidationLog>> logs_;
};

}  // namespace hetsched::testing
