// Handoff steps: moving a tensor between the host and device islands, or
// between two device islands, as the program's kHandoff steps say. The GPU
// side (copies, staging, layout permutes) is shared_gpu/transfer.h's; this
// file decides which transfer a handoff is and when the host takes part.
//
//   upload       host slot → island input. Mapped memory (device-local and
//                host-visible, or host memory the device reads) is written
//                directly; otherwise through a staging buffer and a GPU copy
//                that the reading island waits for on the device.
//   readback     island output → host slot, after the producer's GPU work:
//                host-cached memory is read through its mapping; a discrete
//                GPU's BAR only up to a measured size (shared_gpu/host_access.h),
//                beyond it and for device-local memory the GPU first copies
//                to host-cached staging.
//   alias        nothing moves: the reader's input is the writer's output in
//                the device arena; the step passes the writer's timeline value on.
//   device copy  island output → island input on one context: a recorded GPU
//                copy (or NCHW↔NHWC permute), chained on the timeline.
//                Between contexts: a readback then an upload.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "delegates/delegate.h"
#include "graph/tensor.h"
#include "scheduler/step_runner.h"
#include "shared_gpu/transfer.h"

namespace hetsched {

// Where a tensor sits on a device island, as the handoff sees it.
struct DeviceEnd {
  const DeviceTensor* tensor = nullptr;
  GpuTransfers* transfers = nullptr;  // the lane's transfers on the island's context
};

// The GPU layout conversion a device copy of `type` from `from` to `to`
// needs: none where the layouts agree or do not apply; refused by reason
// where the elements are not 32-bit (layout_permute.comp moves words).
Result<std::optional<Permute4d>> gpu_layout_permute(const TensorType& type, TensorLayout from, TensorLayout to);

Result<std::unique_ptr<StepRunner>> make_upload(int tensor, const TensorType& type, DeviceEnd to, std::string label);
Result<std::unique_ptr<StepRunner>> make_readback(int tensor, const TensorType& type, DeviceEnd from,
                                                  std::string label);
Result<std::unique_ptr<StepRunner>> make_device_copy(int tensor, const TensorType& type, DeviceEnd from, DeviceEnd to,
                                                     std::string label);

}  // namespace hetsched
