// Device fault injection, for tests: "fail the Nth call at point P with
// VkResult R". The GPU code asks injected_fault(P) before the Vulkan call at
// each point and, when it answers anything but VK_SUCCESS, takes that as the
// call's result (the call itself is not made), so every error path a real
// driver can reach is reachable on lavapipe.
//
// Points (where the checks sit):
//   kAllocate  vkAllocateMemory in Buffer::create (every device buffer and arena)
//   kPipeline  vkCreateComputePipelines in ComputePipeline::create (Vulkan
//              and VGF shaders, the transfer service's permute)
//   kSubmit    vkQueueSubmit in SharedGpuContext::submit (every submit)
//   kWait      vkWaitSemaphores in TimelineSemaphore (every host wait on GPU work)
//
// Always compiled, inert until armed: the check is one atomic load per call
// at points that cost microseconds themselves, and a CMake option would make
// the tested binaries (and the ASan/TSan builds) differ from the shipped ones.
// It lives in sync/, the lowest layer that calls Vulkan, because the wait
// point is sync/'s TimelineSemaphore; shared_gpu/ sits above it.
//
// Only tests arm it, and the `hetsched` CLI when the environment variable
// HETSCHED_FAULT is set (arm_fault_from_env; docs/reliability.md), for the
// CLI's own fault tests. The library never reads the environment for it.
//
// Thread-safety: every function may be called from any thread; counters are
// process-wide, so a test that arms a fault runs its sessions alone.
#pragma once

#include <volk.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "hetsched/status.h"

namespace hetsched {

enum class FaultPoint : uint8_t { kAllocate, kPipeline, kSubmit, kWait };
inline constexpr FaultPoint kFaultPoints[] = {FaultPoint::kAllocate, FaultPoint::kPipeline, FaultPoint::kSubmit,
                                              FaultPoint::kWait};

// "alloc", "pipeline", "submit", "wait".
std::string_view fault_point_name(FaultPoint point);

struct FaultSpec {
  FaultPoint point = FaultPoint::kSubmit;
  // The call to fail, counting from 1 at arm time; 0 fails none (counts only).
  uint64_t nth = 0;
  // VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_DEVICE_LOST, or VK_TIMEOUT (wait
  // only: the wait sleeps its whole timeout first, as a hung GPU makes it).
  VkResult result = VK_ERROR_DEVICE_LOST;
};

// Arms `spec` and zeroes every point's call counter. One fault at a time: a
// new arm replaces the previous one. The Nth call fails once; later calls
// pass (a lost device stays lost through the timeline's failure state).
void arm_fault(const FaultSpec& spec);
// Back to inert; counters stop.
void disarm_faults();

// The check at a point: VK_SUCCESS, or the armed result when this is the
// armed point's Nth call since arm_fault.
VkResult injected_fault(FaultPoint point);
// Calls seen at `point` since the last arm_fault (0 while disarmed).
uint64_t fault_point_calls(FaultPoint point);
// Whether the armed fault has been injected since the last arm_fault.
bool fault_fired();

// "POINT:N:RESULT", e.g. "submit:3:device_lost": POINT one of alloc,
// pipeline, submit, wait; N >= 1; RESULT one of oom, device_lost, timeout
// (wait only). kInvalidArgument naming what is wrong.
Result<FaultSpec> parse_fault_spec(std::string_view text);
// Arms the fault named by the environment variable HETSCHED_FAULT, if set
// (for the CLI's fault tests). Ok and nothing armed when unset.
Status arm_fault_from_env();

// Arms `spec` for a scope (tests).
class ScopedFault {
 public:
  explicit ScopedFault(const FaultSpec& spec) { arm_fault(spec); }
  ~ScopedFault() { disarm_faults(); }
  ScopedFault(const ScopedFault&) = delete;
  ScopedFault& operator=(const ScopedFault&) = delete;
};

}  // namespace hetsched
