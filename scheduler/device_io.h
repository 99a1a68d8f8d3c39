// A caller's GPU buffers as a request's model inputs and outputs: a frame
// goes GPU → hetsched → GPU without passing through host memory.
//
// The program's steps stay as they are. For each upload of a model input and
// each readback of a model output, the session binds, beside the usual
// runner, a device-I/O variant (Lane::device_io_runners); a request that
// brings a DeviceIoRequest runs those instead: a recorded vkCmdCopyBuffer
// from the caller's buffer into the island's input, and from the island's
// output into the caller's buffer, chained on the context's timeline like
// any device copy. Copies are re-recorded per request (the caller may pass
// another buffer each time), into one command buffer per step and lane.
//
// An island that keeps a rank-4 input or output NHWC (VGF) gets the
// transfers' NCHW<->NHWC permute shader into or out of the caller's buffer
// instead (32-bit elements; other element types are refused by reason).
#pragma once

#include <volk.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/tensor.h"
#include "scheduler/handoff.h"
#include "scheduler/step_runner.h"

namespace hetsched {

// `size` bytes of a caller's VkBuffer, on the device of the context the
// model's GPU islands use, from `offset`.
struct DeviceBufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// What one request with device I/O brings to its steps.
struct DeviceIoRequest {
  std::vector<DeviceBufferRange> by_tensor;  // by program tensor index; model inputs and outputs set
  // A value on the context's timeline that the input copies wait for on the
  // device (the caller's producer, joined to the timeline); 0: none.
  uint64_t inputs_ready = 0;
};

// The device-I/O variant of an upload of model input `tensor` into `to`,
// and of a readback of model output `tensor` from `from` (both kGpu steps).
// kUnsupported when the island's tensor is not in NCHW (a permute would be
// needed); the message names the tensor.
Result<std::unique_ptr<StepRunner>> make_device_input(int tensor, const TensorType& type, DeviceEnd to,
                                                      std::string label);
Result<std::unique_ptr<StepRunner>> make_device_output(int tensor, const TensorType& type, DeviceEnd from,
                                                       std::string label);

}  // namespace hetsched
