#include "memory/request_checks.h"

#include <cstdint>
#include <limits>

namespace hetsched::memory {

std::string describe_buffer(std::span<const BufferRequest> requests, size_t index) {
  const std::string& name = requests[index].name;
  return name.empty() ? "#" + std::to_string(index) : "'" + name + "'";
}

Status validate_requests(std::span<const BufferRequest> requests, std::string_view action) {
  const std::string prefix = "failed to " + std::string(action) + ": ";
  // The planner keeps buffer indices as uint32 to halve its working set.
  if (requests.size() > std::numeric_limits<uint32_t>::max())
    return invalid_argument(prefix + std::to_string(requests.size()) + " buffers, more than " +
                            std::to_string(std::numeric_limits<uint32_t>::max()));
  for (size_t i = 0; i < requests.size(); ++i) {
    const BufferRequest& r = requests[i];
    if (r.first > r.last)
      return invalid_argument(prefix + "buffer " + describe_buffer(requests, i) + " has first " +
                              std::to_string(r.first) + " > last " + std::to_string(r.last));
    if (r.alignment == 0 || (r.alignment & (r.alignment - 1)) != 0)
      return invalid_argument(prefix + "buffer " + describe_buffer(requests, i) + " has alignment " +
                              std::to_string(r.alignment) + ", not a power of two");
  }
  return Status::ok();
}

}  // namespace hetsched::memory
