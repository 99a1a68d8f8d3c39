// Driving one island of a GPU delegate directly, without the scheduler: an
// island of a whole graph is compiled and initialised, inputs are written
// into device_input(i), the island executes, the host waits on the value it
// signalled and reads device_output(i). Also runs the same graph on the CPU
// delegate, the oracle, and compares tensors.
//
// Header-only (test/CMakeLists compiles only test_util.cc beside each test).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/delegate.h"
#include "graph/graph.h"
#include "scheduler/layout.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/shared_gpu_context.h"
#include "test/test_util.h"

namespace hetsched::testing {


// Copies `data` (NCHW) into `tensor`, permuted when the island keeps it
// NHWC (the VGF delegate's rank-4 tensors): a memcpy into mapped memory,
// else a staging upload on `pool` (waited for).
inline Status write_device_tensor(const DeviceTensor& tensor, const Tensor& nchw, CommandPool& pool) {
  Tensor permuted;
  if (tensor.layout == TensorLayout::kNhwc && nchw.shape().size() == 4) {
    permuted = Tensor(nchw.type());
    permute_layout(nchw.raw(), permuted.raw(), nchw.shape(), dtype_size(nchw.type().dtype), true);
  }
  const Tensor& data = permuted.byte_size() > 0 ? permuted : nchw;
  if (data.byte_size() != tensor.size)
    return invalid_argument("failed to write device tensor: " + std::to_string(data.byte_size()) +
                            " bytes given, it holds " + std::to_string(tensor.size));
  if (tensor.buffer->mapped() != nullptr) {
    std::memcpy(tensor.buffer->mapped() + tensor.offset, data.raw(), data.byte_size());
    return Status::ok();
  }
  return upload(pool, *tensor.buffer, std::span(data.raw(), data.byte_size()), tensor.offset);
}

// Reads `tensor` as a tensor of `type` (NCHW), after all work submitted so far.
inline Result<Tensor> read_device_tensor(const DeviceTensor& tensor, const TensorType& type, CommandPool& pool) {
  Tensor out(type);
  if (out.byte_size() != tensor.size)
    return invalid_argument("failed to read device tensor: " + type.to_string() + " needs " +
                            std::to_string(out.byte_size()) + " bytes, it holds " + std::to_string(tensor.size));
  HS_RETURN_IF_ERROR(readback(pool, *tensor.buffer, std::span(out.raw(), out.byte_size()), tensor.offset));
  if (tensor.layout != TensorLayout::kNhwc || type.shape.size() != 4) return out;
  Tensor nchw(type);
  permute_layout(out.raw(), nchw.raw(), type.shape, dtype_size(type.dtype), false);
  return nchw;
}

// One compiled and initialised island of a whole graph on a device delegate.
class GpuIslandDriver {
 public:
  // Compiles and initialises an island of all of `graph` (not retained
  // beyond the call; the driver keeps a copy of its output types) on
  // `delegate`, and makes a command pool of its own for transfers.
  static Result<GpuIslandDriver> create(Delegate& delegate, const Graph& graph, InitContext init = {},
                                        int island_id = 0) {
    const Island island = whole_graph_island(graph, std::string(delegate.name()), island_id);
    HS_ASSIGN_OR_RETURN(const Blob blob, delegate.compile(island, {}));
    init.island_id = island_id;
    GpuIslandDriver driver;
    HS_ASSIGN_OR_RETURN(driver.handle_, delegate.init(blob, init));
    if (!driver.handle_->gpu_context()) return failed_precondition("failed to drive island: it has no GPU context");
    HS_ASSIGN_OR_RETURN(CommandPool pool, CommandPool::create(*driver.handle_->gpu_context()));
    driver.pool_ = std::make_unique<CommandPool>(std::move(pool));
    for (ValueId v : graph.inputs()) driver.input_types_.push_back(graph.value(v).type);
    for (ValueId v : graph.outputs()) driver.output_types_.push_back(graph.value(v).type);
    return driver;
  }

  IslandHandle& handle() const { return *handle_; }
  SharedGpuContext& context() const { return *handle_->gpu_context(); }
  CommandPool& pool() const { return *pool_; }

  Status write_inputs(const std::vector<Tensor>& inputs) {
    if (inputs.size() != input_types_.size())
      return invalid_argument("failed to write inputs: " + std::to_string(inputs.size()) + " given, the island has " +
                              std::to_string(input_types_.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const DeviceTensor* t = handle_->device_input(i);
      if (!t)
        return failed_precondition("failed to write inputs: input " + std::to_string(i) + " is not on the device");
      HS_RETURN_IF_ERROR(write_device_tensor(*t, inputs[i], *pool_));
    }
    return Status::ok();
  }

  Result<std::vector<Tensor>> read_outputs() {
    std::vector<Tensor> out;
    for (size_t i = 0; i < output_types_.size(); ++i) {
      const DeviceTensor* t = handle_->device_output(i);
      if (!t)
        return failed_precondition("failed to read outputs: output " + std::to_string(i) + " is not on the device");
      HS_ASSIGN_OR_RETURN(Tensor tensor, read_device_tensor(*t, output_types_[i], *pool_));
      out.push_back(std::move(tensor));
    }
    return out;
  }

  // Writes `inputs`, executes with `sync` (default: signal, no waits), waits
  // on the host for the signalled value (or idles the queue when nothing
  // was signalled) and reads the outputs.
  Result<std::vector<Tensor>> run(const std::vector<Tensor>& inputs, GpuStepSync sync = {0, true, false}) {
    HS_RETURN_IF_ERROR(write_inputs(inputs));
    ExecContext ctx;
    ctx.gpu = sync;
    HS_RETURN_IF_ERROR(handle_->execute(ctx, {}, {}));
    last_signalled_ = ctx.signalled_value;
    if (ctx.signalled_value != 0) {
      HS_RETURN_IF_ERROR(context().wait(ctx.signalled_value));
    } else if (!sync.queue_wait_idle_after) {
      HS_RETURN_IF_ERROR(context().wait_idle());
    }
    return read_outputs();
  }

  uint64_t last_signalled() const { return last_signalled_; }

 private:
  GpuIslandDriver() = default;

  // Declared first, destroyed last: the pool (which drains its transfers
  // when destroyed) goes before the island.
  std::unique_ptr<IslandHandle> handle_;
  std::unique_ptr<CommandPool> pool_;
  std::vector<TensorType> input_types_;
  std::vector<TensorType> output_types_;
  uint64_t last_signalled_ = 0;
};

// Runs all of `graph` on the CPU delegate's portable kernels (the oracle).
inline Result<std::vector<Tensor>> run_on_cpu(const Graph& graph, const std::vector<Tensor>& inputs) {
  HS_ASSIGN_OR_RETURN(std::unique_ptr<Delegate> cpu, cpu::make_cpu_delegate({{"engine", "portable"}}));
  const Island island = whole_graph_island(graph, "cpu");
  HS_ASSIGN_OR_RETURN(const Blob blob, cpu->compile(island, {}));
  HS_ASSIGN_OR_RETURN(std::unique_ptr<IslandHandle> handle, cpu->init(blob, {}));
  std::vector<Tensor> outputs;
  for (ValueId v : graph.outputs()) outputs.emplace_back(graph.value(v).type);
  std::vector<TensorRef> in_refs, out_refs;
  for (const Tensor& t : inputs) in_refs.push_back({&t.type(), const_cast<std::byte*>(t.raw())});
  for (Tensor& t : outputs) out_refs.push_back({&t.type(), t.raw()});
  ExecContext ctx;
  HS_RETURN_IF_ERROR(handle->execute(ctx, in_refs, out_refs));
  return outputs;
}

// `g` on `delegate` with the init options `options`, `runs` runs of one
// island whose inputs `inputs(run)` makes, against the portable CPU kernels:
// every output within `bound` (1e-2 with storage fp16) of its largest
// |value|. Run 0's errors are printed after "[label] ".
inline void expect_runs_match_cpu(Delegate& delegate, const Graph& g, const DelegateOptions& options, uint32_t runs,
                                  const std::function<std::vector<Tensor>(uint32_t)>& inputs, float bound,
                                  const std::string& label) {
  const auto storage_it =
      std::find_if(options.begin(), options.end(), [](const auto& option) { return option.first == "storage"; });
  const std::string storage = storage_it == options.end() ? "fp32" : storage_it->second;
  Result<GpuIslandDriver> driver = GpuIslandDriver::create(delegate, g, {options, 0});
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  for (uint32_t run = 0; run < runs; ++run) {
    const std::vector<Tensor> in = inputs(run);
    Result<std::vector<Tensor>> want = run_on_cpu(g, in);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    Result<std::vector<Tensor>> got = driver->run(in);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < want->size(); ++o) {
      float scale = 0;
      for (float v : (*want)[o].span<float>()) scale = std::max(scale, std::abs(v));
      const float err = max_abs_diff((*got)[o], (*want)[o]);
      EXPECT_LE(err, (storage == "fp16" ? 1e-2f : bound) * scale) << label << ", output " << o << ", run " << run;
      if (run == 0)
        std::cout << "[" << label << "] " << storage << " output " << o << ": max abs error " << err << " (max "
                  << scale << ")\n";
    }
  }
}

// Every element of `got` within atol + rtol * |want| of `want` (NaN matches
// NaN), shapes equal. The failure message shows the worst elements.
inline ::testing::AssertionResult all_close(const Tensor& got, const Tensor& want, float rtol, float atol) {
  if (got.type() != want.type())
    return ::testing::AssertionFailure() << "type " << got.type().to_string() << " != " << want.type().to_string();
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const bool both_nan = std::isnan(g[i]) && std::isnan(w[i]);
    const bool same_inf = std::isinf(g[i]) && g[i] == w[i];
    if (both_nan || same_inf || std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i])) continue;
    if (++bad <= 5)
      first += "\n  [" + std::to_string(i) + "] got " + std::to_string(g[i]) + ", want " + std::to_string(w[i]);
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << got.num_elements() << " elements differ (rtol " << rtol
                                       << ", atol " << atol << "):" << first;
}

}  // namespace hetsched::testing
