// Handoff steps: moving a tensor between the host and device islands, or
// between two device islands, as the program's kHandoff steps say.
//
// Device-to-device copies (and NCHW↔NHWC conversions) are recorded into a
// command buffer once, at session load, and replayed on every run: no host
// round trip when both islands share one SharedGpuContext.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "graph/tensor.h"
#include "scheduler/program.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/compute_pipeline.h"
#include "sync/step_sync.h"

namespace hetsched {

// What one run's steps share.
struct RunState {
  SyncMode mode = SyncMode::kTimeline;
  std::vector<Tensor>* slots = nullptr;  // host copies, by program tensor
  // Timeline value after which tensor t is ready in island i's device input:
  // key (tensor, island). Absent or 0: ready now.
  std::map<std::pair<int, int>, uint64_t> ready;
  // Highest value signalled by any GPU step of this run, per context.
  std::map<SharedGpuContext*, uint64_t> last_signalled;
  int host_waits = 0;
};

// The executor's own GPU resources on one context: its command pool (never a
// delegate's) and the layout-conversion pipeline.
class ExecutorGpu {
 public:
  static Result<std::unique_ptr<ExecutorGpu>> create(std::shared_ptr<SharedGpuContext> context);
  SharedGpuContext& context() const { return *context_; }
  CommandPool& pool() { return pool_; }
  const ComputePipeline& permute() const { return permute_; }
  DescriptorPool& descriptors() { return descriptors_; }

 private:
  std::shared_ptr<SharedGpuContext> context_;
  CommandPool pool_;
  ComputePipeline permute_;
  DescriptorPool descriptors_;
};

class HandoffStep {
 public:
  virtual ~HandoffStep() = default;
  virtual Status run(RunState& state) = 0;
  // For traces and logs: "upload x → vgf#0 (NCHW→NHWC)".
  virtual std::string label() const = 0;
};

// Where a tensor sits on a device island, as the handoff sees it.
struct DeviceEnd {
  int island = -1;
  const DeviceTensor* tensor = nullptr;
  ExecutorGpu* gpu = nullptr;  // the executor's resources on the island's context
};

// host slot → device island input (host-side NCHW→NHWC when needed).
std::unique_ptr<HandoffStep> make_upload(int tensor, const TensorType& type, DeviceEnd to, std::string label);
// device island output → host slot.
std::unique_ptr<HandoffStep> make_readback(int tensor, const TensorType& type, DeviceEnd from, std::string label);
// device island output → another device island's input. On one context: a
// recorded GPU copy or permute dispatch; across contexts: through the host.
Result<std::unique_ptr<HandoffStep>> make_device_copy(int tensor, const TensorType& type, DeviceEnd from,
                                                      DeviceEnd to, std::string label);

}  // namespace hetsched
