// `hetsched run --check`: the outputs of a run against the same model run on
// the portable CPU kernels (the f32 reference every delegate is tested
// against), so a profile's precision (fp16 tensor cores) or a delegate's
// error shows on one line per output.
#pragma once

#include <string>
#include <vector>

#include "graph/tensor.h"
#include "hetsched/status.h"
#include "profile/profile.h"

namespace hetsched::cli {

struct OutputCheck {
  std::string name;
  double max_abs_diff = 0;  // largest |got - reference|
  double max_abs_ref = 0;   // largest |reference|
  int64_t differing = 0;    // elements not bit-equal
  bool argmax_equal = true;
  int64_t argmax_got = 0, argmax_ref = 0;
};

// The profile for the reference: the CPU delegate alone, portable engine,
// the partition settings of `profile` left out.
Profile reference_profile();

// Compares each output with its reference (same order and shapes).
// kInvalidArgument when the counts or shapes differ.
Result<std::vector<OutputCheck>> compare_outputs(const std::vector<std::string>& names,
                                                 const std::vector<Tensor>& got, const std::vector<Tensor>& reference);

// "check y: max |diff| 1.2e-03 = 4.1e-04 of max |reference| 2.96, argmax 281 (reference 281)".
std::string format_check(const OutputCheck& check);

}  // namespace hetsched::cli
