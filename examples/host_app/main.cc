// A host application's use of hetsched through its public API alone
// (include/hetsched/hetsched.h, vulkan.h): load a model with a profile given
// as text, run it synchronously and asynchronously on the caller's own
// buffers and check the answer against the portable reference kernels; then
// lend hetsched the host's own Vulkan device (lookup_only: hetsched cannot
// make one) and check the GPU's answer too. Exit 0 when every check passes.
#include <hetsched/hetsched.h>
#include <hetsched/vulkan.h>

#include "host_vulkan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr const char* kXnnpack = R"(
name: host-app
delegates:
  cpu: {enabled: true, engine: xnnpack, threads: 2}
)";
constexpr const char* kBorrowedVulkan = R"(
name: host-app-vulkan
delegates:
  vulkan: {enabled: true, shared_gpu: {token: host_app, group: 0, mode: lookup_only}}
  cpu: {enabled: true, engine: xnnpack, threads: 2}
partition: {prefer: vulkan_first}
)";
constexpr const char* kPortable = R"(
name: host-app-reference
delegates:
  cpu: {enabled: true, engine: portable, threads: 1}
)";

int fail(const std::string& what) {
  std::fprintf(stderr, "host_app: %s\n", what.c_str());
  return 1;
}

// Deterministic input bytes for every f32 input (other types left zero).
std::vector<std::vector<float>> inputs_for(const hetsched::Model& model) {
  std::vector<std::vector<float>> data;
  for (const hetsched::TensorInfo& in : model.inputs()) {
    std::vector<float> v(in.bytes / sizeof(float));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 23) - 11) / 8.f;
    data.push_back(std::move(v));
  }
  return data;
}

double max_difference(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < a[i].size(); ++k)
      worst = std::max(worst, static_cast<double>(std::fabs(a[i][k] - b[i][k])));
  return worst;
}

// One frame GPU → hetsched → GPU on the host's device (single-input,
// single-output models): the host's GPU copy fills the input buffer and
// signals 1, hetsched waits for 1 on the device and signals 2 once it wrote
// the output buffer, the host's GPU copy of the output waits for 2.
int run_on_gpu_buffers(HostVulkan& vk, hetsched::Model& model, const std::vector<float>& x,
                       const std::vector<float>& want) {
  if (model.inputs().size() != 1 || model.outputs().size() != 1) return 0;
  const size_t in_bytes = model.inputs()[0].bytes, out_bytes = model.outputs()[0].bytes;
  HostVulkan::Buffer staging_in = vk.make_buffer(in_bytes, true), input = vk.make_buffer(in_bytes, false);
  HostVulkan::Buffer output = vk.make_buffer(out_bytes, false), staging_out = vk.make_buffer(out_bytes, true);
  const VkSemaphore frames = vk.make_timeline();
  std::memcpy(staging_in.mapped, x.data(), in_bytes);
  bool ok = vk.copy(staging_in, input, VK_NULL_HANDLE, 0, frames, 1);
  hetsched::GpuRunInfo info;
  const hetsched::Status s = hetsched::run_on_vulkan_buffers(
      model, {{input.buffer, 0, in_bytes}}, {{output.buffer, 0, out_bytes}},
      {.wait_semaphore = frames, .wait_value = 1, .signal_semaphore = frames, .signal_value = 2}, &info);
  ok = ok && s.is_ok() && vk.copy(output, staging_out, frames, 2, frames, 3) && vk.wait(frames, 3);
  std::vector<float> got(want.size());
  if (ok) std::memcpy(got.data(), staging_out.mapped, out_bytes);
  // Drain the queue before freeing what its batches named: a timeline wait
  // says the work is done, not that the driver let go of the batch (lavapipe
  // crashed on a semaphore destroyed right after one).
  vkQueueWaitIdle(vk.queue);
  for (HostVulkan::Buffer* b : {&staging_in, &input, &output, &staging_out}) vk.free_buffer(*b);
  vkDestroySemaphore(vk.device, frames, nullptr);
  if (!s.is_ok()) return fail(s.message());
  if (!ok) return fail("the host's GPU copies around the GPU-buffer run failed");
  const double worst = max_difference({got}, {want});
  std::printf("host_app: GPU buffers in and out, max abs difference from the portable kernels %.3g\n", worst);
  return worst <= 1e-4 ? 0 : fail("the GPU-buffer run's outputs differ from the portable kernels");
}

// The model on the host's own device: registered, used under lookup_only,
// unregistered while the model still runs on it (the model keeps it), and
// destroyed by the host after the model is gone (hetsched destroys nothing
// it borrowed: a second destroy would fail the validation layer or crash).
int run_on_host_vulkan(const char* path, const std::vector<hetsched::ConstView>& in,
                       const std::vector<std::vector<float>>& want, const std::vector<float>& inputs_x) {
  HostVulkan vk;
  if (std::string why = vk.create(); !why.empty()) {
    std::printf("host_app: no host Vulkan device (%s): the borrowed-device check is skipped\nhost_app: ok\n",
                why.c_str());
    return 0;
  }
  std::printf("host_app: host device %s\n", vk.device_name.c_str());
  {
    auto missing = hetsched::Model::load(path, hetsched::ProfileSource::text(kBorrowedVulkan));
    if (missing.is_ok()) return fail("lookup_only loaded with no device registered");
    std::printf("host_app: before registering, as expected: %s\n", missing.status().message().c_str());
  }
  hetsched::HostVulkanDevice dev{vk.instance, vk.physical_device, vk.device, vk.queue, vk.queue_family};
  if (auto s = hetsched::register_vulkan_device("host_app", 0, dev); !s.is_ok()) return fail(s.message());
  {
    auto model = hetsched::Model::load(path, hetsched::ProfileSource::text(kBorrowedVulkan));
    if (!model.is_ok()) return fail(model.status().message());
    for (const std::string& island : (*model)->islands()) std::printf("host_app: island %s\n", island.c_str());
    std::vector<std::vector<float>> got(want.size());
    std::vector<hetsched::MutableView> got_v;
    for (size_t i = 0; i < want.size(); ++i) {
      got[i].resize(want[i].size());
      got_v.push_back(hetsched::MutableView::of(got[i]));
    }
    if (auto s = (*model)->run(in, got_v); !s.is_ok()) return fail(s.message());
    if (int failed = run_on_gpu_buffers(vk, **model, inputs_x, want[0])) return failed;
    if (auto s = hetsched::unregister_vulkan_device("host_app", 0); !s.is_ok()) return fail(s.message());
    for (auto& v : got) std::fill(v.begin(), v.end(), 0.f);
    if (auto s = (*model)->run(in, got_v); !s.is_ok()) return fail("after unregistering: " + s.message());
    const double worst = max_difference(got, want);
    std::printf("host_app: on the host's device, max abs difference from the portable kernels %.3g\n", worst);
    if (!(worst <= 1e-4)) return fail("the GPU's outputs differ from the portable kernels");
  }
  vk.destroy();  // the host's own handles, destroyed once, by the host
  std::printf("host_app: ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return fail("usage: host_app MODEL (.onnx, .hsg or .hsp with static shapes)");
  std::printf("host_app: hetsched %s\n", HETSCHED_VERSION);

  auto model = hetsched::Model::load(argv[1], hetsched::ProfileSource::text(kXnnpack));
  if (!model.is_ok()) return fail(model.status().message());
  auto reference = hetsched::Model::load(argv[1], hetsched::ProfileSource::text(kPortable));
  if (!reference.is_ok()) return fail(reference.status().message());
  for (const std::string& island : (*model)->islands()) std::printf("host_app: island %s\n", island.c_str());

  const auto inputs = inputs_for(**model);
  std::vector<hetsched::ConstView> in;
  for (const auto& v : inputs) in.push_back(hetsched::ConstView::of(v));
  const auto& outs = (*model)->outputs();
  std::vector<std::vector<float>> got(outs.size()), async(outs.size()), want(outs.size());
  std::vector<hetsched::MutableView> got_v, async_v, want_v;
  for (size_t i = 0; i < outs.size(); ++i) {
    for (auto* v : {&got[i], &async[i], &want[i]}) v->resize(outs[i].bytes / sizeof(float));
    got_v.push_back(hetsched::MutableView::of(got[i]));
    async_v.push_back(hetsched::MutableView::of(async[i]));
    want_v.push_back(hetsched::MutableView::of(want[i]));
  }

  hetsched::RunInfo info;
  if (auto s = (*model)->run(in, got_v, &info); !s.is_ok()) return fail(s.message());
  if (auto s = (*reference)->run(in, want_v); !s.is_ok()) return fail(s.message());
  auto pending = (*model)->submit(in, async_v);
  hetsched::Result<hetsched::RunInfo> done = pending.get();
  if (!done.is_ok()) return fail(done.status().message());

  // Wrong sizes are refused with a message, not run.
  std::vector<hetsched::MutableView> short_v = got_v;
  if (!short_v.empty()) short_v[0].bytes -= 1;
  const hetsched::Status refused = (*model)->run(in, short_v);
  if (refused.is_ok()) return fail("a short output buffer was accepted");
  std::printf("host_app: refused as expected: %s\n", refused.message().c_str());

  double worst = 0;
  for (size_t i = 0; i < outs.size(); ++i)
    for (size_t k = 0; k < want[i].size(); ++k) {
      worst = std::max(worst, static_cast<double>(std::fabs(got[i][k] - want[i][k])));
      if (got[i][k] != async[i][k]) return fail("submit() and run() disagree on output " + outs[i].name);
    }
  std::printf("host_app: %zu outputs, max abs difference from the portable kernels %.3g, %.3f ms\n", outs.size(),
              worst, info.latency_ms);
  if (!(worst <= 1e-4)) return fail("outputs differ from the portable kernels");
  return run_on_host_vulkan(argv[1], in, want, inputs.empty() ? std::vector<float>{} : inputs[0]);
}
