#include "cli/bench_device_io.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"

namespace hetsched::cli {

namespace {

constexpr VkBufferUsageFlags kUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

Result<Buffer> device_buffer(SharedGpuContext& context, size_t bytes) {
  return Buffer::create(context, std::max<size_t>(bytes, 4), kUsage, MemoryUsage::kDeviceLocal);
}

// The largest |a - b| over the elements of two tensors of one type, read
// as f32 where they are f32 and byte by byte (0 or 1) otherwise.
double max_abs_difference(const Tensor& a, const std::vector<std::byte>& b) {
  if (a.type().dtype != DType::kFloat32) return std::memcmp(a.raw(), b.data(), b.size()) == 0 ? 0.0 : 1.0;
  double worst = 0;
  const float* x = a.data<float>();
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    float y;
    std::memcpy(&y, b.data() + i * sizeof(float), sizeof(float));
    const double d = std::fabs(static_cast<double>(x[i]) - y);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

}  // namespace

Result<DeviceIoMeasurement> measure_device_io(Session& session, const std::vector<Tensor>& inputs, int requests,
                                              int warmup) {
  SharedGpuContext* context = session.device_io_context();
  if (!context)
    return failed_precondition("--device-io: this model cannot run on GPU buffers: " + session.device_io_refusal());
  HS_ASSIGN_OR_RETURN(CommandPool pool, CommandPool::create(*context));
  std::vector<Buffer> in_buffers, out_buffers;
  DeviceRunRequest request;
  for (const Tensor& t : inputs) {
    HS_ASSIGN_OR_RETURN(Buffer b, device_buffer(*context, t.byte_size()));
    HS_RETURN_IF_ERROR(upload(pool, b, {t.raw(), t.byte_size()}));
    request.inputs.push_back({b.handle(), 0, t.byte_size()});
    in_buffers.push_back(std::move(b));
  }
  for (const TensorType& type : session.output_types()) {
    HS_ASSIGN_OR_RETURN(Buffer b, device_buffer(*context, type.byte_size()));
    request.outputs.push_back({b.handle(), 0, type.byte_size()});
    out_buffers.push_back(std::move(b));
  }
  const auto one = [&](RunStats* stats) -> Status {
    HS_ASSIGN_OR_RETURN(const uint64_t value, session.run_device(request, stats));
    return context->wait(value);
  };
  for (int i = 0; i < warmup; ++i) HS_RETURN_IF_ERROR(one(nullptr));
  DeviceIoMeasurement m;
  m.stats.reserve(static_cast<size_t>(requests));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < requests; ++i) {
    RunStats stats;
    const auto t0 = std::chrono::steady_clock::now();
    HS_RETURN_IF_ERROR(one(&stats));
    m.latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    m.stats.push_back(std::move(stats));
  }
  m.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  // What the timed requests left in the output buffers, against run().
  std::vector<Tensor> want;
  for (const TensorType& type : session.output_types()) want.emplace_back(type);
  HS_RETURN_IF_ERROR(session.run_into(inputs, want));
  for (size_t i = 0; i < out_buffers.size(); ++i) {
    std::vector<std::byte> got(want[i].byte_size());
    HS_RETURN_IF_ERROR(readback(pool, out_buffers[i], got));
    m.max_abs_difference = std::max(m.max_abs_difference, max_abs_difference(want[i], got));
  }
  return m;
}

}  // namespace hetsched::cli
