#include "scheduler/host_copy.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

namespace hetsched {

namespace {
// Below this a single memcpy beats waking workers; chunks are large enough
// that each worker streams, small enough to spread 2 MiB over 8 cores.
constexpr size_t kParallelFrom = size_t{2} << 20;
constexpr size_t kChunk = size_t{256} << 10;
}  // namespace

void host_copy(void* dst, const void* src, size_t bytes) {
  if (bytes < kParallelFrom) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  const size_t chunks = (bytes + kChunk - 1) / kChunk;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, chunks, 1), [&](const tbb::blocked_range<size_t>& r) {
    const size_t begin = r.begin() * kChunk;
    const size_t end = std::min(bytes, r.end() * kChunk);
    std::memcpy(d + begin, s + begin, end - begin);
  });
}

}  // namespace hetsched
