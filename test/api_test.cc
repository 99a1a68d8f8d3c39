// The public API (include/hetsched/hetsched.h) through libhetsched.so, as an
// embedder links it: loading, errors as statuses, runs that read and write
// the caller's buffers in place, and the version macros.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "hetsched/hetsched.h"
#include "hetsched/vulkan.h"

namespace {

const std::string kModel = std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model.hsg";
const hetsched::ProfileSource kCpu = hetsched::ProfileSource::text(
    "name: api-test\ndelegates:\n  cpu: {enabled: true, engine: xnnpack, threads: 1}\n");

std::vector<float> pattern(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * scale;
  return v;
}

TEST(ApiTest, VersionMacrosMatchTheProject) {
  EXPECT_STREQ(HETSCHED_VERSION, HETSCHED_PROJECT_VERSION);
  EXPECT_EQ(std::to_string(HETSCHED_VERSION_MAJOR) + "." + std::to_string(HETSCHED_VERSION_MINOR) + "." +
                std::to_string(HETSCHED_VERSION_PATCH),
            HETSCHED_PROJECT_VERSION);
}

TEST(ApiTest, DescribesInputsAndOutputs) {
  auto model = hetsched::Model::load(kModel, kCpu);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  ASSERT_EQ((*model)->inputs().size(), 1u);
  const hetsched::TensorInfo& x = (*model)->inputs()[0];
  EXPECT_EQ(x.dtype, "f32");
  EXPECT_EQ(x.shape, (std::vector<int64_t>{1, 3, 8, 8}));
  EXPECT_EQ(x.bytes, 768u);
  EXPECT_EQ(x.elements(), 192u);
  ASSERT_FALSE((*model)->islands().empty());
  EXPECT_EQ((*model)->islands()[0].rfind("0 cpu ", 0), 0u) << (*model)->islands()[0];
}

TEST(ApiTest, ErrorsAreStatusesThatNameTheProblem) {
  auto missing = hetsched::Model::load("/nonexistent/model.hsg", kCpu);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/model.hsg"), std::string::npos) << missing.status().message();

  auto bad_profile = hetsched::Model::load(kModel, hetsched::ProfileSource::text("delegates: [1, 2]\n"));
  ASSERT_FALSE(bad_profile.is_ok());
  EXPECT_NE(bad_profile.status().message().find("delegates"), std::string::npos) << bad_profile.status().message();

  auto model = hetsched::Model::load(kModel, kCpu);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  std::vector<float> x(192), y((*model)->outputs()[0].elements());
  const hetsched::Status none = (*model)->run({}, {hetsched::MutableView::of(y)});
  EXPECT_EQ(none.code(), hetsched::StatusCode::kInvalidArgument);
  EXPECT_EQ(none.message(), "failed to run model: expected 1 inputs, got 0");
  const hetsched::Status null_input = (*model)->run({{nullptr, 768}}, {hetsched::MutableView::of(y)});
  EXPECT_NE(null_input.message().find("no data"), std::string::npos) << null_input.message();
  auto future = (*model)->submit({hetsched::ConstView::of(x)}, {{y.data(), 4}});
  hetsched::Result<hetsched::RunInfo> refused = future.get();
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("needs " + std::to_string(y.size() * 4) + " bytes, got 4"),
            std::string::npos)
      << refused.status().message();
}

// Lending a Vulkan device: refusals that need no device (examples/host_app
// lends a real one, runs on it and destroys it itself: HostApp.* in ctest).
TEST(ApiTest, VulkanDeviceRegistrationRefusesWhatItCannotUse) {
  const hetsched::Status null_handles = hetsched::register_vulkan_device("api_test", 1, {});
  EXPECT_EQ(null_handles.code(), hetsched::StatusCode::kInvalidArgument);
  EXPECT_EQ(null_handles.message(), "failed to register Vulkan device 'api_test:1': instance is VK_NULL_HANDLE");
  const hetsched::Status nothing = hetsched::unregister_vulkan_device("api_test", 1);
  EXPECT_EQ(nothing.code(), hetsched::StatusCode::kNotFound);
  EXPECT_EQ(nothing.message(), "failed to unregister Vulkan device 'api_test:1': nothing is registered under it");
  auto lookup = hetsched::Model::load(
      kModel, hetsched::ProfileSource::text("name: t\ndelegates:\n  vulkan: {enabled: true, shared_gpu: {token: "
                                            "api_test, group: 1, mode: lookup_only}}\n"));
  ASSERT_FALSE(lookup.is_ok());
  EXPECT_NE(lookup.status().message().find("'api_test:1': none is registered (mode lookup_only; a host application"),
            std::string::npos)
      << lookup.status().message();
}

// The outputs land in the caller's vectors (no copy handed back), the
// caller's inputs are left as they were, and a second run with other data
// gives other answers in the same buffers.
TEST(ApiTest, RunsReadAndWriteTheCallersBuffers) {
  auto model = hetsched::Model::load(kModel, kCpu);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const std::vector<float> a = pattern(192, 0.25f), b = pattern(192, -0.5f);
  std::vector<float> y((*model)->outputs()[0].elements(), 12345.f);
  const float* where = y.data();
  hetsched::RunInfo info;
  ASSERT_TRUE((*model)->run({hetsched::ConstView::of(a)}, {hetsched::MutableView::of(y)}, &info).is_ok());
  EXPECT_EQ(y.data(), where);
  EXPECT_GT(info.latency_ms, 0);
  const std::vector<float> first = y;
  EXPECT_NE(first[0], 12345.f);
  EXPECT_EQ(a, pattern(192, 0.25f));

  auto future = (*model)->submit({hetsched::ConstView::of(b)}, {hetsched::MutableView::of(y)}, {.trace = true});
  hetsched::Result<hetsched::RunInfo> done = future.get();
  ASSERT_TRUE(done.is_ok()) << done.status().message();
  EXPECT_NE(y, first);
  EXPECT_NE(done->trace_json.find("\"island 0 (cpu)\""), std::string::npos) << done->trace_json;

  std::vector<float> again(y.size());
  ASSERT_TRUE((*model)->run({hetsched::ConstView::of(a)}, {hetsched::MutableView::of(again)}).is_ok());
  EXPECT_EQ(again, first);
}

}  // namespace
