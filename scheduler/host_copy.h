// Host-side copies of handoffs (an upload's bytes into mapped or staging
// memory, a readback's out of it), spread over cores when large: one core
// moves a few GB/s, slower than the copy engine on the other side (a 6 MiB
// readback's memcpy took 0.7 ms on the H100 machine, its DMA 0.13 ms).
#pragma once

#include <cstddef>

namespace hetsched {

void host_copy(void* dst, const void* src, size_t bytes);

}  // namespace hetsched
