// Which output positions of a conv reach the input with one kernel tap,
// along one axis: the shared geometry of cropping taps that read only
// padding (passes/crop_conv_taps.h) and of running a conv tap by tap over
// the outputs each tap reaches (the CPU's pointwise_conv.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

namespace hetsched {

// The outputs [first, end) of `out` whose input index o * stride - pad +
// tap * dilation is inside [0, in): an interval, as the index grows with
// o (empty: first == end). In 128 bits, for a crafted model's strides or
// dilations near INT64_MAX.
inline std::pair<int64_t, int64_t> outputs_reaching_input(int64_t in, int64_t out, int64_t stride, int64_t pad,
                                                          int64_t tap, int64_t dilation) {
  const __int128 low = static_cast<__int128>(pad) - static_cast<__int128>(tap) * dilation;  // o * stride >= low
  const __int128 high = low + in;                                                          // o * stride < high
  const __int128 first = low <= 0 ? 0 : (low + stride - 1) / stride;
  const __int128 end = high <= 0 ? 0 : (high - 1) / stride + 1;
  const int64_t f = static_cast<int64_t>(std::min<__int128>(first, out));
  const int64_t e = static_cast<int64_t>(std::min<__int128>(end, out));
  return {f, std::max(f, e)};
}

}  // namespace hetsched
