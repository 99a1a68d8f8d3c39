#include "memory/arena_planner.h"

#include "memory/greedy_placer.h"
#include "memory/live_profile.h"
#include "memory/placement_order.h"
#include "memory/request_checks.h"

namespace hetsched::memory {

// The driver: validate everything, measure the lower bound, then run the
// greedy placer once per order and keep the smallest arena.
Result<ArenaPlan> plan_arena(std::span<const BufferRequest> requests, const ExtraConflicts& extra_conflicts) {
  HS_RETURN_IF_ERROR(validate_requests(requests, "plan arena"));
  HS_ASSIGN_OR_RETURN(LiveProfile profile, make_live_profile(requests));

  const std::vector<uint32_t> size_order = order_by_size(requests);
  Result<Placement> best = place_greedily(requests, size_order, extra_conflicts);
  // An arena of lower_bound bytes cannot be beaten; otherwise the breadth
  // order often packs the widest step tighter (see placement_order.h).
  if (!best.is_ok() || best->planned_bytes > profile.max_live_bytes) {
    const std::vector<uint32_t> breadth_order = order_by_breadth(requests, profile);
    if (breadth_order != size_order) {
      Result<Placement> by_breadth = place_greedily(requests, breadth_order, extra_conflicts);
      // An offset overflow in one order need not happen in the other.
      if (by_breadth.is_ok() && (!best.is_ok() || by_breadth->planned_bytes < best->planned_bytes))
        best = std::move(by_breadth);
    }
  }
  if (!best.is_ok()) return best.status();

  ArenaPlan plan;
  plan.offsets = std::move(best->offsets);
  plan.planned_bytes = best->planned_bytes;
  plan.lower_bound = profile.max_live_bytes;
  return plan;
}

}  // namespace hetsched::memory
