// The Vulkan delegate's compute pipelines on one context, made on first use
// and shared by every island of the delegate on that context.
//
// Ownership: holds its context (through each ComputePipeline). Islands hold
// the library by shared_ptr, so pipelines outlive the command buffers that
// bind them.
//
// Thread-safety: pipeline() may be called from any thread.
#pragma once

#include <array>
#include <memory>
#include <mutex>

#include "delegates/vulkan/lowering.h"
#include "hetsched/status.h"
#include "shared_gpu/compute_pipeline.h"
#include "shared_gpu/shared_gpu_context.h"

namespace hetsched::vulkan {

class KernelLibrary {
 public:
  explicit KernelLibrary(std::shared_ptr<SharedGpuContext> context) : context_(std::move(context)) {}

  // The pipeline of `kernel`, created now if it does not exist yet. The
  // pointer stays valid as long as the library.
  Result<const ComputePipeline*> pipeline(Kernel kernel);

 private:
  std::shared_ptr<SharedGpuContext> context_;
  std::mutex mutex_;
  std::array<std::unique_ptr<ComputePipeline>, kKernelCount> pipelines_;  // guarded by mutex_
};

}  // namespace hetsched::vulkan
