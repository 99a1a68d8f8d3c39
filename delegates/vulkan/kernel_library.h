// The Vulkan delegate's compute pipelines on one context, made on first use
// and shared by every island of the delegate on that context.
//
// Ownership: holds its context (through each ComputePipeline). Islands hold
// the library by shared_ptr, so pipelines outlive the command buffers that
// bind them.
//
// Thread-safety: pipeline() may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "delegates/vulkan/lowering.h"
#include "hetsched/status.h"
#include "shared_gpu/compute_pipeline.h"
#include "shared_gpu/shared_gpu_context.h"

namespace hetsched::vulkan {

class KernelLibrary {
 public:
  explicit KernelLibrary(std::shared_ptr<SharedGpuContext> context) : context_(std::move(context)) {}

  // The pipeline of `kernel` with `specialization` (constant_id i =
  // element i), created now if it does not exist yet. The pointer stays
  // valid as long as the library. Non-zero `half_bindings` (Step::
  // half_bindings) takes the kernel's 16-bit storage variant.
  Result<const ComputePipeline*> pipeline(Kernel kernel, const std::vector<uint32_t>& specialization = {},
                                          uint32_t half_bindings = 0);
  // Pipelines made so far.
  size_t size() const;

 private:
  using Key = std::tuple<Kernel, std::vector<uint32_t>, uint32_t>;

  std::shared_ptr<SharedGpuContext> context_;
  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<ComputePipeline>> pipelines_;  // guarded by mutex_
};

}  // namespace hetsched::vulkan
