// The size check every tensor type read from a file, or inferred from one,
// passes before anything multiplies its dims: a corrupt or hostile shape must
// give an error, never an overflowing num_elements() or byte_size().
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "graph/tensor.h"

namespace hetsched {

// True when `type`'s dims (dynamic ones counted as 1) are >= kDynamicDim and
// its byte size, by checked_byte_size, is at most 2^63 - 1 bytes, so that
// its element count and byte size fit int64_t and size_t.
inline bool has_representable_size(const TensorType& type) {
  TensorType sized = type;
  for (int64_t& d : sized.shape) {
    if (d < kDynamicDim) return false;
    if (d == kDynamicDim) d = 1;
  }
  const std::optional<size_t> bytes = checked_byte_size(sized);
  return bytes && *bytes <= static_cast<size_t>(std::numeric_limits<int64_t>::max());
}

}  // namespace hetsched
