#include "scheduler/layout.h"

#include <cstring>

namespace hetsched {

bool layout_applies(const TensorType& type) {
  if (type.rank() != 4) return false;
  // One channel, or one pixel per channel: both orders are the same bytes.
  return type.shape[1] != 1 && type.shape[2] * type.shape[3] != 1;
}

void permute_layout(const std::byte* src, std::byte* dst, const Shape& nchw, size_t elem_size, bool to_nhwc) {
  const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t i_nchw = ((b * c + ch) * h + y) * w + x;
          const int64_t i_nhwc = ((b * h + y) * w + x) * c + ch;
          const int64_t from = to_nhwc ? i_nchw : i_nhwc;
          const int64_t to = to_nhwc ? i_nhwc : i_nchw;
          std::memcpy(dst + to * elem_size, src + from * elem_size, elem_size);
        }
}

}  // namespace hetsched
