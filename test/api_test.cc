// The public API (include/hetsched/hetsched.h) through libhetsched.so, as an
// embedder links it: loading, errors as statuses, runs that read and write
// the caller's buffers in place, and the version macros.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "hetsched/hetsched.h"
#include "hetsched/vulkan.h"
#include "host_vulkan_device.h"

namespace {

const std::string kModel = std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model.hsg";
const hetsched::ProfileSource kCpu = hetsched::ProfileSource::text(
    "name: api-test\ndelegates:\n  cpu: {enabled: true, engine: xnnpack, threads: 1}\n");

const hetsched::ProfileSource kPortable = hetsched::ProfileSource::text(
    "name: api-test-reference\ndelegates:\n  cpu: {enabled: true, engine: portable, threads: 1}\n");

// The model on a registered device, every op it can take on the GPU.
hetsched::ProfileSource on_registered_vulkan(const std::string& token) {
  return hetsched::ProfileSource::text("name: api-test-vulkan\ndelegates:\n  vulkan: {enabled: true, shared_gpu: "
                                       "{token: " + token + ", group: 0, mode: lookup_only}}\n  cpu: {enabled: "
                                       "true, engine: xnnpack, threads: 1}\npartition: {prefer: vulkan_first}\n");
}

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

hetsched::HostVulkanDevice lend(const hetsched::testing::HostVulkanDeviceForTest& host) {
  hetsched::HostVulkanDevice dev;
  dev.instance = host.instance;
  dev.physical_device = host.physical_device;
  dev.device = host.device;
  dev.queue = host.queue;
  dev.queue_family_index = host.queue_family;
  return dev;
}

// The portable kernels' answer for `x` (an independent reference: no GPU).
std::vector<float> reference_output(const std::vector<float>& x) {
  auto model = hetsched::Model::load(kModel, kPortable);
  EXPECT_TRUE(model.is_ok()) << model.status().message();
  if (!model.is_ok()) return {};
  std::vector<float> y((*model)->outputs()[0].elements());
  EXPECT_TRUE((*model)->run({hetsched::ConstView::of(x)}, {hetsched::MutableView::of(y)}).is_ok());
  return y;
}

float max_difference(const std::vector<float>& a, const float* b) {
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

// A frame goes GPU → hetsched → GPU on the host's own device: the host's GPU
// copy fills the input buffer and signals its semaphore, hetsched waits for
// it on the device, copies from and to the host's buffers and signals the
// next value, and the host's GPU copy of the output waits for that. The
// trace shows device copies from and to the caller's buffers and no upload
// or readback; the answer matches the portable kernels; validation (on the
// host's instance, which hetsched's calls on that device go through) stays
// silent, through the destruction of the host's device.
// Two frames through `model` on the host's buffers: each compared with the
// portable kernels, the trace showing the caller's buffers copied into and
// out of `delegate`'s islands (and, with `all_on_gpu`, nothing through host
// memory).
void run_frames_on_host_buffers(hetsched::testing::HostVulkanDeviceForTest& host, hetsched::Model& model,
                                const std::string& delegate, bool all_on_gpu, VkSemaphore frames, uint64_t& value,
                                const hetsched::testing::HostVulkanDeviceForTest::HostBuffer& input,
                                const hetsched::testing::HostVulkanDeviceForTest::HostBuffer& output) {
  const size_t in_bytes = 192 * sizeof(float);
  const size_t out_bytes = model.outputs()[0].bytes;
  auto staging_in = host.make_buffer(in_bytes, true), staging_out = host.make_buffer(out_bytes, true);
  for (float scale : {0.25f, -0.5f}) {  // the second frame re-records the copies
    const std::vector<float> x = pattern(192, scale), want = reference_output(x);
    std::memcpy(staging_in.mapped, x.data(), in_bytes);
    std::memset(staging_out.mapped, 0, out_bytes);
    ASSERT_EQ(host.copy(staging_in, input, VK_NULL_HANDLE, 0, frames, value + 1), VK_SUCCESS);
    hetsched::GpuRunInfo info;
    const hetsched::Status ran = hetsched::run_on_vulkan_buffers(
        model, {{input.buffer, 0, in_bytes}}, {{output.buffer, 0, out_bytes}},
        {.wait_semaphore = frames, .wait_value = value + 1, .signal_semaphore = frames, .signal_value = value + 2},
        &info, {.trace = true});
    ASSERT_TRUE(ran.is_ok()) << ran.message();
    ASSERT_EQ(host.copy(output, staging_out, frames, value + 2, frames, value + 3), VK_SUCCESS);
    ASSERT_EQ(host.wait(frames, value + 3), VK_SUCCESS);
    value += 3;
    EXPECT_LE(max_difference(want, static_cast<const float*>(staging_out.mapped)), 1e-4f) << delegate;
    EXPECT_GT(info.timeline_value, 0u);
    const std::string& trace = info.run.trace_json;
    EXPECT_NE(trace.find("device copy 'x' caller's VkBuffer → " + delegate), std::string::npos) << trace;
    EXPECT_NE(trace.find("→ caller's VkBuffer"), std::string::npos) << trace;
    if (all_on_gpu) {
      EXPECT_EQ(trace.find("upload '"), std::string::npos) << trace;
      EXPECT_EQ(trace.find("readback '"), std::string::npos) << trace;
    }
  }
  ASSERT_EQ(vkQueueWaitIdle(host.queue), VK_SUCCESS);
  host.free_buffer(staging_in);
  host.free_buffer(staging_out);
}

TEST(ApiTest, GpuBuffersInAndOutStayOnTheHostsDevice) {
  hetsched::testing::HostVulkanDeviceForTest host;
  if (std::string why = host.create("api_test_gpu_buffers"); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(hetsched::register_vulkan_device("api_gpu", 0, lend(host)).is_ok());
  const size_t in_bytes = 192 * sizeof(float);
  {
    auto model = hetsched::Model::load(kModel, on_registered_vulkan("api_gpu"));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    for (const std::string& island : (*model)->islands()) std::printf("island %s\n", island.c_str());
    const size_t out_bytes = (*model)->outputs()[0].bytes;
    auto input = host.make_buffer(in_bytes, false), output = host.make_buffer(out_bytes, false);
    const VkSemaphore frames = host.make_timeline();
    uint64_t value = 0;
    run_frames_on_host_buffers(host, **model, "vulkan", true, frames, value, input, output);
    // Refusals: a size that is not the tensor's; a model with host islands.
    const hetsched::Status short_input =
        hetsched::run_on_vulkan_buffers(**model, {{input.buffer, 0, in_bytes - 4}}, {{output.buffer, 0, out_bytes}});
    EXPECT_EQ(short_input.code(), hetsched::StatusCode::kInvalidArgument);
    EXPECT_NE(short_input.message().find("input 'x' (f32[1,3,8,8]) needs 768 bytes of a VkBuffer, got 764 bytes"),
              std::string::npos)
        << short_input.message();
    auto on_cpu = hetsched::Model::load(kModel, kCpu);
    ASSERT_TRUE(on_cpu.is_ok()) << on_cpu.status().message();
    const hetsched::Status host_islands =
        hetsched::run_on_vulkan_buffers(**on_cpu, {{input.buffer, 0, in_bytes}}, {{output.buffer, 0, out_bytes}});
    EXPECT_EQ(host_islands.code(), hetsched::StatusCode::kFailedPrecondition);
    EXPECT_NE(host_islands.message().find("failed to run on GPU buffers: 'x' is read by island 0 (cpu) on the host"),
              std::string::npos)
        << host_islands.message();
    // The queue drained before the host frees what its submissions named:
    // lavapipe's queue thread still tidies a batch up after the timeline
    // wait above returned, and under load it crashed on the freed semaphore.
    ASSERT_EQ(vkQueueWaitIdle(host.queue), VK_SUCCESS);
    for (auto* b : {&input, &output}) host.free_buffer(*b);
    vkDestroySemaphore(host.device, frames, nullptr);
  }
  ASSERT_TRUE(hetsched::unregister_vulkan_device("api_gpu", 0).is_ok());
  host.destroy();
  EXPECT_EQ(host.log->message_count(), 0u) << host.messages();
}

// The same frames through VGF islands, which keep rank-4 tensors NHWC: the
// copies from and to the caller's NCHW buffers (storage buffers, for the
// permute shader) permute them on the device. VGF lacks one of the model's
// ops, so a CPU island runs between its two.
TEST(ApiTest, GpuBuffersOfAVgfModelArePermutedOnTheDevice) {
  hetsched::testing::HostVulkanDeviceForTest host;
  if (std::string why = host.create("api_test_gpu_buffers_vgf"); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(hetsched::register_vulkan_device("api_vgf", 0, lend(host)).is_ok());
  {
    auto model = hetsched::Model::load(
        kModel, hetsched::ProfileSource::text("name: api-test-vgf\ndelegates:\n  vgf: {enabled: true, shared_gpu: "
                                              "{token: api_vgf, group: 0, mode: lookup_only}}\n  cpu: {enabled: "
                                              "true, engine: xnnpack, threads: 1}\npartition: {prefer: vgf_first}\n"));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    const std::vector<std::string> islands = (*model)->islands();
    for (const std::string& island : islands) std::printf("island %s\n", island.c_str());
    ASSERT_FALSE(islands.empty());
    EXPECT_NE(islands.front().find("vgf"), std::string::npos);
    EXPECT_NE(islands.back().find("vgf"), std::string::npos);
    auto input = host.make_buffer(192 * sizeof(float), false, true);
    auto output = host.make_buffer((*model)->outputs()[0].bytes, false, true);
    const VkSemaphore frames = host.make_timeline();
    uint64_t value = 0;
    run_frames_on_host_buffers(host, **model, "vgf", false, frames, value, input, output);
    for (auto* b : {&input, &output}) host.free_buffer(*b);
    vkDestroySemaphore(host.device, frames, nullptr);
  }
  ASSERT_TRUE(hetsched::unregister_vulkan_device("api_vgf", 0).is_ok());
  host.destroy();
  EXPECT_EQ(host.log->message_count(), 0u) << host.messages();
}

// Unregistering while a model runs on the device: the model keeps it and
// runs on, hetsched destroys none of the host's handles (the host's queue
// still runs its own work after the model is gone), and everything hetsched
// made on the device is gone before the host destroys it: the validation
// layer reports objects still alive at vkDestroyDevice, and a second destroy
// of a handle as an error.
TEST(ApiTest, UnregisterWhileAModelRunsOnTheDevice) {
  hetsched::testing::HostVulkanDeviceForTest host;
  if (std::string why = host.create("api_test_unregister"); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(hetsched::register_vulkan_device("api_unreg", 0, lend(host)).is_ok());
  const std::vector<float> x = pattern(192, 0.75f), want = reference_output(x);
  {
    auto model = hetsched::Model::load(kModel, on_registered_vulkan("api_unreg"));
    ASSERT_TRUE(model.is_ok()) << model.status().message();
    std::vector<float> y(want.size());
    ASSERT_TRUE((*model)->run({hetsched::ConstView::of(x)}, {hetsched::MutableView::of(y)}).is_ok());
    EXPECT_LE(max_difference(want, y.data()), 1e-4f);
    ASSERT_TRUE(hetsched::unregister_vulkan_device("api_unreg", 0).is_ok());
    EXPECT_EQ(hetsched::unregister_vulkan_device("api_unreg", 0).code(), hetsched::StatusCode::kNotFound);
    auto later = hetsched::Model::load(kModel, on_registered_vulkan("api_unreg"));
    EXPECT_FALSE(later.is_ok());  // lookup_only: nothing is registered any more
    std::fill(y.begin(), y.end(), 0.f);
    const hetsched::Status again = (*model)->run({hetsched::ConstView::of(x)}, {hetsched::MutableView::of(y)});
    ASSERT_TRUE(again.is_ok()) << again.message();
    EXPECT_LE(max_difference(want, y.data()), 1e-4f);
  }
  // The model is gone: the host's device and queue still work.
  auto a = host.make_buffer(64, true), b = host.make_buffer(64, true);
  std::memset(a.mapped, 7, 64);
  const VkSemaphore done = host.make_timeline();
  ASSERT_EQ(host.copy(a, b, VK_NULL_HANDLE, 0, done, 1), VK_SUCCESS);
  ASSERT_EQ(host.wait(done, 1), VK_SUCCESS);
  EXPECT_EQ(static_cast<const unsigned char*>(b.mapped)[63], 7);
  ASSERT_EQ(vkQueueWaitIdle(host.queue), VK_SUCCESS);  // as above
  host.free_buffer(a);
  host.free_buffer(b);
  vkDestroySemaphore(host.device, done, nullptr);
  host.destroy();
  EXPECT_EQ(host.log->message_count(), 0u) << host.messages();
}

}  // namespace
