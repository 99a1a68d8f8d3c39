#include "sync/fault_injection.h"

#include <array>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <string>

namespace hetsched {
namespace {

constexpr size_t kPointCount = std::size(kFaultPoints);

// The armed fault, read lock-free at every check. arm_fault writes the spec
// while `armed` is false and publishes it with a release store.
struct FaultState {
  std::atomic<bool> armed{false};
  std::atomic<int> point{0};
  std::atomic<uint64_t> nth{0};
  std::atomic<int> result{VK_SUCCESS};
  std::atomic<bool> fired{false};
  std::array<std::atomic<uint64_t>, kPointCount> calls{};
};

FaultState& state() {
  static FaultState s;
  return s;
}

}  // namespace

std::string_view fault_point_name(FaultPoint point) {
  switch (point) {
    case FaultPoint::kAllocate:
      return "alloc";
    case FaultPoint::kPipeline:
      return "pipeline";
    case FaultPoint::kSubmit:
      return "submit";
    case FaultPoint::kWait:
      return "wait";
  }
  return "?";
}

void arm_fault(const FaultSpec& spec) {
  FaultState& s = state();
  s.armed.store(false, std::memory_order_release);
  for (auto& c : s.calls) c.store(0);
  s.point.store(static_cast<int>(spec.point));
  s.nth.store(spec.nth);
  s.result.store(spec.result);
  s.fired.store(false);
  s.armed.store(true, std::memory_order_release);
}

void disarm_faults() {
  FaultState& s = state();
  s.armed.store(false, std::memory_order_release);
  for (auto& c : s.calls) c.store(0);
}

VkResult injected_fault(FaultPoint point) {
  FaultState& s = state();
  if (!s.armed.load(std::memory_order_acquire)) return VK_SUCCESS;
  const uint64_t n = s.calls[static_cast<size_t>(point)].fetch_add(1) + 1;
  if (static_cast<int>(point) != s.point.load() || n != s.nth.load()) return VK_SUCCESS;
  s.fired.store(true);
  return static_cast<VkResult>(s.result.load());
}

uint64_t fault_point_calls(FaultPoint point) { return state().calls[static_cast<size_t>(point)].load(); }

bool fault_fired() { return state().fired.load(); }

Result<FaultSpec> parse_fault_spec(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return invalid_argument("failed to parse fault '" + std::string(text) + "': " + why +
                            " (expected POINT:N:RESULT, e.g. submit:3:device_lost)");
  };
  const size_t a = text.find(':');
  const size_t b = a == std::string_view::npos ? a : text.find(':', a + 1);
  if (b == std::string_view::npos) return bad("not three fields");
  const std::string_view point = text.substr(0, a), nth = text.substr(a + 1, b - a - 1), result = text.substr(b + 1);
  FaultSpec spec;
  bool known = false;
  for (FaultPoint p : kFaultPoints)
    if (fault_point_name(p) == point) spec.point = p, known = true;
  if (!known) return bad("unknown point '" + std::string(point) + "' (accepted: alloc, pipeline, submit, wait)");
  const auto [end, ec] = std::from_chars(nth.data(), nth.data() + nth.size(), spec.nth);
  if (ec != std::errc() || end != nth.data() + nth.size() || spec.nth == 0) return bad("N must be an integer >= 1");
  if (result == "oom") spec.result = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  else if (result == "device_lost") spec.result = VK_ERROR_DEVICE_LOST;
  else if (result == "timeout" && spec.point == FaultPoint::kWait) spec.result = VK_TIMEOUT;
  else return bad("unknown result '" + std::string(result) + "' (accepted: oom, device_lost; timeout at wait)");
  return spec;
}

Status arm_fault_from_env() {
  const char* text = std::getenv("HETSCHED_FAULT");
  if (text == nullptr || *text == '\0') return Status::ok();
  Result<FaultSpec> spec = parse_fault_spec(text);
  if (!spec.is_ok()) return spec.status().with_context("HETSCHED_FAULT: ");
  arm_fault(*spec);
  return Status::ok();
}

}  // namespace hetsched
