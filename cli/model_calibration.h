// `hetsched calibrate --model M`: the model's own nodes timed on this
// machine, so the auto policy plans it (and any model with the same op
// signatures) from measured times instead of the roofline of the probes.
//
// For each enabled delegate, M is planned with that delegate first
// (cpu_first, vulkan_first, vgf_first) and run with logging.profile_ops;
// each timed piece (a kernel, an XNNPACK segment, a dispatch) has its p50
// shared among the nodes it ran in proportion to their roofline estimates
// on its delegate, and each node's time is stored under its op signature
// (graph/op_work.h) in DelegateCosts::measured_us, the median where several
// nodes share one; a delegate's own plan's times win over those from the
// others' plans. Delegates that time nothing (the VGF delegate) keep the
// roofline; the notes say so.
#pragma once

#include <string>
#include <vector>

#include "delegates/cost_model.h"
#include "hetsched/status.h"
#include "profile/profile.h"
#include "scheduler/model_loader.h"

namespace hetsched::cli {

struct ModelCalibration {
  std::vector<std::string> notes;  // "det.onnx: cpu 41 signatures, vulkan 38 (3 pieces, 1.2 ms)", ...
};

// Adds `model`'s measurements to `table` (which supplies the roofline the
// pieces are split by; delegates it lacks use built-in figures). `repeats`
// timed requests per delegate after `warmup`.
Result<ModelCalibration> calibrate_model(const Profile& profile, const std::string& model, const InputShapes& shapes,
                                         int repeats, int warmup, CostTable& table);

}  // namespace hetsched::cli
