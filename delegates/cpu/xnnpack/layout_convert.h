// NCHW <-> NHWC copies: at the edges of XNNPACK segments, and for weights
// (OIHW -> OHWI is the same permutation with O as the batch).
#pragma once

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>

namespace hetsched::cpu::xnnpack {

// dst[n][p][c] = src[n][c][p] for n < batch, c < channels, p < pixels.
// src and dst must not overlap. Runs on `pool` (not retained), the one the
// segment's runtime uses, so a segment's run keeps to its own threads;
// nullptr runs on the calling thread.
void nchw_to_nhwc(const float* src, float* dst, int64_t batch, int64_t channels, int64_t pixels,
                  pthreadpool_t pool = nullptr);
// dst[n][c][p] = src[n][p][c]; the inverse of nchw_to_nhwc.
void nhwc_to_nchw(const float* src, float* dst, int64_t batch, int64_t channels, int64_t pixels,
                  pthreadpool_t pool = nullptr);

// memcpy, split over `pool` (not retained; nullptr: the calling thread)
// when it is large enough to pay for the split.
void parallel_copy(const void* src, void* dst, size_t bytes, pthreadpool_t pool = nullptr);

}  // namespace hetsched::cpu::xnnpack
