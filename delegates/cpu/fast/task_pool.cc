#include "delegates/cpu/fast/task_pool.h"

#include <algorithm>
#include <cstring>

namespace hetsched::cpu::fast {

namespace {

// parallel_copy's piece of work per item.
constexpr size_t kChunk = 256 * 1024;

}  // namespace

void parallel_copy(const void* src, void* dst, size_t bytes, TaskPool* pool) {
  // An empty tensor has no buffer, and memcpy to null is undefined even for
  // 0 bytes (UBSan in scripts/asan.sh: the conformance tests' empty tensors).
  if (bytes == 0) return;
  if (!pool || bytes < 2 * kChunk) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const auto* s = static_cast<const std::byte*>(src);
  auto* d = static_cast<std::byte*>(dst);
  pool->parallelize((bytes + kChunk - 1) / kChunk, 0, JobSource::kCopy, [&](size_t begin, size_t end) {
    std::memcpy(d + begin * kChunk, s + begin * kChunk, std::min(end * kChunk, bytes) - begin * kChunk);
  });
}

}  // namespace hetsched::cpu::fast
