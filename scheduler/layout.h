// NCHW <-> NHWC on the host, for handoffs between the host (which always
// holds the graph's NCHW order) and device islands that keep NHWC.
#pragma once

#include <cstddef>

#include "graph/tensor.h"

namespace hetsched {

// True when a tensor of `type` is stored differently in kNhwc: rank 4, with
// more than one channel and more than one pixel ([n,c,1,1] and [n,1,h,w]
// are the same bytes in both orders).
bool layout_applies(const TensorType& type);
// Permutes a rank-4 tensor of `elem_size`-byte elements with logical shape
// [n, c, h, w]: to_nhwc NCHW → NHWC, else NHWC → NCHW. dst and src must not overlap.
void permute_layout(const std::byte* src, std::byte* dst, const Shape& nchw, size_t elem_size, bool to_nhwc);

}  // namespace hetsched
