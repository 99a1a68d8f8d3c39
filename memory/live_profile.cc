#include "memory/live_profile.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "memory/request_checks.h"

namespace hetsched::memory {

Result<LiveProfile> make_live_profile(std::span<const BufferRequest> requests) {
  const size_t n = requests.size();
  std::vector<size_t> by_first(n);
  std::iota(by_first.begin(), by_first.end(), size_t{0});
  std::vector<size_t> by_last = by_first;
  std::sort(by_first.begin(), by_first.end(),
            [&](size_t a, size_t b) { return requests[a].first < requests[b].first; });
  std::sort(by_last.begin(), by_last.end(), [&](size_t a, size_t b) { return requests[a].last < requests[b].last; });

  LiveProfile profile;
  uint64_t live = 0;
  size_t next_start = 0;
  size_t next_end = 0;
  while (next_start < n) {
    const int point = requests[by_first[next_start]].first;
    // Buffers that ended before this point leave first, so the running sum
    // never exceeds the true live bytes and an overflow is a real one.
    while (next_end < n && requests[by_last[next_end]].last < point) live -= requests[by_last[next_end++]].bytes;
    for (; next_start < n && requests[by_first[next_start]].first == point; ++next_start) {
      const size_t i = by_first[next_start];
      if (__builtin_add_overflow(live, requests[i].bytes, &live))
        return invalid_argument("failed to plan arena: bytes live at step " + std::to_string(point) +
                                " overflow uint64 (adding buffer " + describe_buffer(requests, i) + ")");
    }
    profile.points.push_back(point);
    profile.live_bytes.push_back(live);
    profile.max_live_bytes = std::max(profile.max_live_bytes, live);
  }
  return profile;
}

}  // namespace hetsched::memory
