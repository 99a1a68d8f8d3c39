// Model::Impl, shared by the files of api/ (model.cc: host buffers;
// vulkan.cc: the host's GPU buffers). Internal: never installed.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "hetsched/hetsched.h"
#include "scheduler/session.h"

namespace hetsched {

struct Model::Impl {
  // One per shape variant (most models have one).
  struct Variant {
    std::unique_ptr<Session> session;
    std::vector<TensorInfo> inputs, outputs;
    std::vector<TensorType> input_types, output_types;
  };
  std::vector<Variant> variants;

  // The variant a run with these input views and options is for.
  Result<const Variant*> pick(const std::vector<size_t>& input_bytes, const RunOptions& options) const;
};

// A run's stats as the public RunInfo (with the trace when asked).
RunInfo info_of(const RunStats& stats, bool trace);

}  // namespace hetsched
