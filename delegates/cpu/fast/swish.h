// Swish (x * Sigmoid(alpha * x); SiLU at alpha 1) as one vectorised pass,
// for the fast kernel (graph order) and the NHWC step between XNNPACK
// segments (xnnpack/nhwc_ops.h), which has no layout to care about.
#pragma once

#include <pthreadpool.h>

#include <cstddef>

namespace hetsched::cpu::fast {

// y[i] = x[i] * Sigmoid(alpha * x[i]) for i in [0, n), split over `pool`
// (not retained; nullptr: this thread) when the work pays for it. `x` may
// be `y`.
void swish(const float* x, float* y, size_t n, float alpha, pthreadpool_t pool);

}  // namespace hetsched::cpu::fast
