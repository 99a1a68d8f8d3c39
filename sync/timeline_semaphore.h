// TimelineSemaphore: the one sync primitive between GPU steps, and between the
// GPU and the host.
//
// Value rules (Vulkan's, written here because every user must follow them):
//   - the value only grows; a signal (from the host or a queue) must be
//     strictly above the value at the time it executes;
//   - signals submitted to one queue execute in submission order, so values
//     allocated with next_value() and submitted under one queue lock
//     (SharedGpuContext::submit does both) are always valid;
//   - a wait for value N returns once the counter is >= N; a wait may be
//     submitted before the matching signal.
//
// Ownership: a semaphore made with create() is destroyed by the destructor; one
// wrapped with wrap() is borrowed and never destroyed. Either way the VkDevice
// must outlive this object, and nothing may still be waiting on or signalling
// the semaphore when an owning TimelineSemaphore is destroyed.
//
// Thread-safety: every method may be called from any thread.
//
// Failure state: once a call fails with VK_ERROR_DEVICE_LOST (or mark_failed()
// records a failure, e.g. from a queue submit), the semaphore is failed for
// good and every later wait/signal/query returns that first error.
#pragma once

#include <volk.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "hetsched/status.h"

namespace hetsched {

class TimelineSemaphore {
 public:
  // The entry points it calls. sync/ does not load Vulkan itself: the caller
  // passes the loaded pointers (shared_gpu's volk_timeline_functions()).
  struct Functions {
    PFN_vkCreateSemaphore create_semaphore = nullptr;
    PFN_vkDestroySemaphore destroy_semaphore = nullptr;
    PFN_vkWaitSemaphores wait_semaphores = nullptr;
    PFN_vkSignalSemaphore signal_semaphore = nullptr;
    PFN_vkGetSemaphoreCounterValue get_semaphore_counter_value = nullptr;
  };

  // Creates an owned timeline semaphore at `initial_value` on `device`, which
  // must have the timelineSemaphore feature enabled.
  static Result<std::unique_ptr<TimelineSemaphore>> create(VkDevice device, const Functions& functions,
                                                           uint64_t initial_value = 0);
  // Wraps `semaphore`, a timeline semaphore made by someone else. Borrowed
  // (never destroyed here) unless `take_ownership`, for handles whose owner
  // hands them over. next_value() starts above its current value.
  static Result<std::unique_ptr<TimelineSemaphore>> wrap(VkDevice device, VkSemaphore semaphore,
                                                         const Functions& functions, bool take_ownership = false);

  ~TimelineSemaphore();
  TimelineSemaphore(const TimelineSemaphore&) = delete;
  TimelineSemaphore& operator=(const TimelineSemaphore&) = delete;

  VkSemaphore handle() const { return semaphore_; }
  bool owns_handle() const { return owns_handle_; }

  // Reserves and returns a fresh value, one above the last reserved (or
  // host-signalled) one. The caller must signal it, and must submit that
  // signal in allocation order relative to other users of the semaphore
  // (hold the queue lock across next_value() and the submit).
  uint64_t next_value();
  // The submit that was to signal `value` (the last reserved, under the same
  // queue lock) failed: unreserves it, so waits for last_value() do not wait
  // for a signal that will never come.
  void release_unsubmitted(uint64_t value);
  // The highest value reserved so far: waiting for it waits for all work
  // submitted with reserved values.
  uint64_t last_value() const { return last_value_.load(); }

  // Blocks until the counter reaches `value`. A timeout is kUnavailable
  // "timed out after T ms waiting for timeline value N (current M)"; a
  // negative timeout polls once; nanoseconds::max() waits forever.
  Status wait(uint64_t value, std::chrono::nanoseconds timeout);
  // Like wait(), but from `spin_from` on (steady clock) polls the counter for
  // up to `max_spin` instead of sleeping in the driver: a sleeping thread
  // wakes tens of microseconds after the GPU signals (~50 us on an H100's
  // driver), a polling one within a microsecond. Callers set `spin_from`
  // shortly before the GPU is expected to finish, so the core is busy only
  // for that margin.
  Status wait_spinning_from(uint64_t value, std::chrono::steady_clock::time_point spin_from,
                            std::chrono::nanoseconds max_spin, std::chrono::nanoseconds timeout);
  // Sets the counter to `value` from the host. `value` must be above the
  // current counter (kInvalidArgument otherwise); later next_value() results
  // stay above it.
  Status signal_from_host(uint64_t value);
  Result<uint64_t> current_value();

  // Records `status` (not ok) as the reason this semaphore can no longer be
  // trusted, unless an earlier failure is recorded. Used by submitters whose
  // vkQueueSubmit returned VK_ERROR_DEVICE_LOST.
  void mark_failed(Status status);
  // The recorded failure, or ok.
  Status failure() const;

 private:
  TimelineSemaphore(VkDevice device, VkSemaphore semaphore, bool owns_handle, const Functions& functions,
                    uint64_t last_value);
  // vkWaitSemaphores for `value`, as wait() takes its timeout.
  VkResult wait_for(uint64_t value, std::chrono::nanoseconds timeout);
  // The Status for `result` of `call`, prefixed with `context`; a device loss
  // is also recorded as this semaphore's failure.
  Status check(VkResult result, std::string_view call, std::string_view context);

  VkDevice device_;
  VkSemaphore semaphore_;
  bool owns_handle_;
  Functions fn_;
  std::atomic<uint64_t> last_value_;
  mutable std::mutex failure_mutex_;
  Status failure_;  // guarded by failure_mutex_
};

}  // namespace hetsched
