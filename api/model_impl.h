// Model::Impl, shared by the files of api/ (model.cc: host buffers;
// vulkan.cc: the host's GPU buffers). Internal: never installed.
#pragma once

#include <memory>
#include <vector>

#include "hetsched/hetsched.h"
#include "scheduler/session.h"

namespace hetsched {

struct Model::Impl {
  std::unique_ptr<Session> session;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<TensorType> input_types, output_types;
};

// A run's stats as the public RunInfo (with the trace when asked).
RunInfo info_of(const RunStats& stats, bool trace);

}  // namespace hetsched
