// hetsched bench --device-io: requests on GPU buffers, as a host whose data
// already lives on the GPU runs them (Session::run_device, the path of the
// public run_on_vulkan_buffers): the inputs uploaded once into device-local
// buffers on the model's GPU, the outputs left in device-local buffers
// there, each request timed from its submit to the GPU's completion (a host
// wait on the context's timeline). No host copy is timed — what PyTorch's
// CUDA-graph timings measure too.
#pragma once

#include <vector>

#include "graph/tensor.h"
#include "scheduler/session.h"

namespace hetsched::cli {

struct DeviceIoMeasurement {
  std::vector<double> latencies;  // ms per request, submit to completion
  std::vector<RunStats> stats;
  double wall_ms = 0;
  // The outputs left in the device buffers against run()'s for the same
  // inputs: the same islands run, so they must be equal.
  double max_abs_difference = 0;
};

// kFailedPrecondition naming Session::device_io_refusal() for a model
// whose inputs or outputs a host island touches.
Result<DeviceIoMeasurement> measure_device_io(Session& session, const std::vector<Tensor>& inputs, int requests,
                                              int warmup);

}  // namespace hetsched::cli
