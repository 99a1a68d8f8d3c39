#include "scheduler/layout.h"

#include <cstdint>
#include <cstring>

namespace hetsched {

bool layout_applies(const TensorType& type) {
  if (type.rank() != 4) return false;
  // One channel, or one pixel per channel: both orders are the same bytes.
  return type.shape[1] != 1 && type.shape[2] * type.shape[3] != 1;
}

namespace {

// One element of `elem_size` bytes; the 4-byte case (f32, i32) as one load
// and store.
inline void copy_element(std::byte* dst, const std::byte* src, size_t elem_size) {
  if (elem_size == 4) {
    uint32_t v;
    std::memcpy(&v, src, 4);
    std::memcpy(dst, &v, 4);
  } else {
    std::memcpy(dst, src, elem_size);
  }
}

}  // namespace

// Walks `dst` in order, so every write follows the last: an upload's `dst` is
// mapped device memory, on a discrete GPU its BAR, which the host writes
// through write-combining buffers. Walked in source order, an NCHW → NHWC
// permute of a 3-channel image wrote every 12th byte, in three passes over
// the whole image, which those buffers send as partial-line PCIe writes
// (inputs of every CNN on the VGF delegate take this path); strided reads
// of cached host memory cost little.
void permute_layout(const std::byte* src, std::byte* dst, const Shape& nchw, size_t elem_size, bool to_nhwc) {
  const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  const int64_t hw = h * w;
  const size_t e = elem_size;
  if (to_nhwc) {
    for (int64_t b = 0; b < n; ++b) {
      const std::byte* image = src + static_cast<size_t>(b * c * hw) * e;
      for (int64_t p = 0; p < hw; ++p)
        for (int64_t ch = 0; ch < c; ++ch, dst += e) copy_element(dst, image + static_cast<size_t>(ch * hw + p) * e, e);
    }
    return;
  }
  for (int64_t b = 0; b < n; ++b) {
    const std::byte* image = src + static_cast<size_t>(b * c * hw) * e;
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p, dst += e) copy_element(dst, image + static_cast<size_t>(p * c + ch) * e, e);
  }
}

}  // namespace hetsched
