// verify_arena_plan(): the contract of an ArenaPlan, checked independently of
// how the plan was made (it shares no code with the placer beyond input
// validation), so tests of the planner do not trust the planner.
#include <algorithm>
#include <numeric>
#include <string>

#include "memory/arena_planner.h"
#include "memory/request_checks.h"

namespace hetsched::memory {

Status verify_arena_plan(std::span<const BufferRequest> requests, const ArenaPlan& plan,
                         const ExtraConflicts& extra_conflicts) {
  HS_RETURN_IF_ERROR(validate_requests(requests, "verify arena plan"));
  const std::string prefix = "failed to verify arena plan: ";
  if (plan.offsets.size() != requests.size())
    return invalid_argument(prefix + std::to_string(plan.offsets.size()) + " offsets for " +
                            std::to_string(requests.size()) + " buffers");

  std::vector<uint64_t> ends(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const uint64_t offset = plan.offsets[i];
    if (offset % requests[i].alignment != 0)
      return invalid_argument(prefix + "buffer " + describe_buffer(requests, i) + " at offset " +
                              std::to_string(offset) + " is not aligned to " + std::to_string(requests[i].alignment));
    if (__builtin_add_overflow(offset, requests[i].bytes, &ends[i]))
      return invalid_argument(prefix + "buffer " + describe_buffer(requests, i) + " at offset " +
                              std::to_string(offset) + " + " + std::to_string(requests[i].bytes) +
                              " bytes overflows uint64");
    if (ends[i] > plan.planned_bytes)
      return invalid_argument(prefix + "buffer " + describe_buffer(requests, i) + " ends at " +
                              std::to_string(ends[i]) + ", past planned_bytes " + std::to_string(plan.planned_bytes));
  }

  // Visits exactly the pairs that share bytes: in offset order, the buffers
  // starting before `a` ends. Only those can break the plan.
  std::vector<size_t> sorted;
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].bytes > 0) sorted.push_back(i);
  std::sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) {
    return plan.offsets[a] != plan.offsets[b] ? plan.offsets[a] < plan.offsets[b] : a < b;
  });
  for (size_t x = 0; x < sorted.size(); ++x) {
    const size_t a = sorted[x];
    for (size_t y = x + 1; y < sorted.size() && plan.offsets[sorted[y]] < ends[a]; ++y) {
      const size_t b = sorted[y];
      const bool live_together = lifetimes_intersect(requests[a], requests[b]);
      if (!live_together && !(extra_conflicts && extra_conflicts(a, b))) continue;
      const std::string why = live_together ? "both live at step " + std::to_string(std::max(requests[a].first,
                                                                                              requests[b].first))
                                            : "an extra conflict";
      return invalid_argument(prefix + "buffers " + describe_buffer(requests, a) + " and " +
                              describe_buffer(requests, b) + " overlap in bytes [" +
                              std::to_string(plan.offsets[b]) + ", " + std::to_string(std::min(ends[a], ends[b])) +
                              ") despite " + why);
    }
  }
  return Status::ok();
}

}  // namespace hetsched::memory
