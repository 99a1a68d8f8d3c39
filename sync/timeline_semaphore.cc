#include "sync/timeline_semaphore.h"

#include <algorithm>
#include <string>
#include <thread>

#include "sync/fault_injection.h"
#include "sync/vk_status.h"

namespace hetsched {
namespace {

bool functions_complete(const TimelineSemaphore::Functions& fn) {
  return fn.create_semaphore && fn.destroy_semaphore && fn.wait_semaphores && fn.signal_semaphore &&
         fn.get_semaphore_counter_value;
}

}  // namespace

Result<std::unique_ptr<TimelineSemaphore>> TimelineSemaphore::create(VkDevice device, const Functions& functions,
                                                                     uint64_t initial_value) {
  if (device == VK_NULL_HANDLE || !functions_complete(functions)) {
    return invalid_argument("failed to create timeline semaphore: no device or entry points given");
  }
  VkSemaphoreTypeCreateInfo type_info{};
  type_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type_info.initialValue = initial_value;
  VkSemaphoreCreateInfo create_info{};
  create_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  create_info.pNext = &type_info;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  HS_VK_RETURN_IF_ERROR(functions.create_semaphore(device, &create_info, nullptr, &semaphore));
  return std::unique_ptr<TimelineSemaphore>(
      new TimelineSemaphore(device, semaphore, /*owns_handle=*/true, functions, initial_value));
}

Result<std::unique_ptr<TimelineSemaphore>> TimelineSemaphore::wrap(VkDevice device, VkSemaphore semaphore,
                                                                   const Functions& functions, bool take_ownership) {
  if (device == VK_NULL_HANDLE || semaphore == VK_NULL_HANDLE || !functions_complete(functions)) {
    return invalid_argument("failed to wrap timeline semaphore: no device, semaphore or entry points given");
  }
  uint64_t value = 0;
  HS_VK_RETURN_IF_ERROR(functions.get_semaphore_counter_value(device, semaphore, &value));
  return std::unique_ptr<TimelineSemaphore>(
      new TimelineSemaphore(device, semaphore, take_ownership, functions, value));
}

TimelineSemaphore::TimelineSemaphore(VkDevice device, VkSemaphore semaphore, bool owns_handle,
                                     const Functions& functions, uint64_t last_value)
    : device_(device), semaphore_(semaphore), owns_handle_(owns_handle), fn_(functions), last_value_(last_value) {}

TimelineSemaphore::~TimelineSemaphore() {
  if (owns_handle_) fn_.destroy_semaphore(device_, semaphore_, nullptr);
}

uint64_t TimelineSemaphore::next_value() { return last_value_.fetch_add(1) + 1; }

void TimelineSemaphore::release_unsubmitted(uint64_t value) {
  uint64_t expected = value;
  last_value_.compare_exchange_strong(expected, value - 1);
}

VkResult TimelineSemaphore::wait_for(uint64_t value, std::chrono::nanoseconds timeout) {
  const uint64_t timeout_ns = timeout == std::chrono::nanoseconds::max() ? UINT64_MAX
                              : timeout.count() < 0                     ? 0
                                                                        : static_cast<uint64_t>(timeout.count());
  VkSemaphoreWaitInfo wait_info{};
  wait_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wait_info.semaphoreCount = 1;
  wait_info.pSemaphores = &semaphore_;
  wait_info.pValues = &value;
  const VkResult injected = injected_fault(FaultPoint::kWait);
  if (injected == VK_TIMEOUT) {
    // As a hung GPU: nothing signals, the whole timeout passes.
    std::this_thread::sleep_for(timeout);
    return VK_TIMEOUT;
  }
  if (injected == VK_ERROR_DEVICE_LOST) {
    // The real work finishes first, so the objects the caller frees on its
    // error path are idle, as a lost device's are (it runs nothing more).
    (void)fn_.wait_semaphores(device_, &wait_info, timeout_ns);
  }
  if (injected != VK_SUCCESS) return injected;
  return fn_.wait_semaphores(device_, &wait_info, timeout_ns);
}

Status TimelineSemaphore::wait(uint64_t value, std::chrono::nanoseconds timeout) {
  HS_RETURN_IF_ERROR(failure());
  const VkResult result = wait_for(value, timeout);
  if (result == VK_TIMEOUT) {
    uint64_t current = 0;
    fn_.get_semaphore_counter_value(device_, semaphore_, &current);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
    return unavailable("timed out after " + std::to_string(ms) + " ms waiting for timeline value " +
                       std::to_string(value) + " (current " + std::to_string(current) + ")");
  }
  Status status = check(result, "vkWaitSemaphores", "failed to wait for timeline value " + std::to_string(value) + ": ");
  // A wait that failed (out of memory) leaves the work running, and callers
  // free what it uses on their error path (a staging buffer, a lane's
  // arena): wait once more so that the work is done before they do. A lost
  // device runs nothing.
  if (!status.is_ok() && result != VK_ERROR_DEVICE_LOST) (void)wait_for(value, timeout);
  return status;
}

Status TimelineSemaphore::wait_spinning_from(uint64_t value, std::chrono::steady_clock::time_point spin_from,
                                             std::chrono::nanoseconds max_spin, std::chrono::nanoseconds timeout) {
  HS_RETURN_IF_ERROR(failure());
  using clock = std::chrono::steady_clock;
  const auto before_spin = spin_from - clock::now();
  if (before_spin > std::chrono::nanoseconds(0)) {
    const VkResult result = wait_for(value, std::chrono::duration_cast<std::chrono::nanoseconds>(before_spin));
    if (result == VK_SUCCESS) return Status::ok();
    if (result != VK_TIMEOUT) {
      Status status =
          check(result, "vkWaitSemaphores", "failed to wait for timeline value " + std::to_string(value) + ": ");
      if (result != VK_ERROR_DEVICE_LOST) (void)wait_for(value, timeout);  // as in wait()
      return status;
    }
  }
  const auto spin_end = clock::now() + max_spin;
  do {
    uint64_t current = 0;
    HS_RETURN_IF_ERROR(check(fn_.get_semaphore_counter_value(device_, semaphore_, &current),
                             "vkGetSemaphoreCounterValue", "failed to read the timeline: "));
    if (current >= value) return Status::ok();
  } while (clock::now() < spin_end);
  return wait(value, timeout);
}

Status TimelineSemaphore::signal_from_host(uint64_t value) {
  HS_RETURN_IF_ERROR(failure());
  HS_ASSIGN_OR_RETURN(const uint64_t current, current_value());
  if (value <= current) {
    return invalid_argument("failed to signal timeline value " + std::to_string(value) +
                            ": not above the current value " + std::to_string(current));
  }
  VkSemaphoreSignalInfo signal_info{};
  signal_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  signal_info.semaphore = semaphore_;
  signal_info.value = value;
  HS_RETURN_IF_ERROR(check(fn_.signal_semaphore(device_, &signal_info), "vkSignalSemaphore",
                           "failed to signal timeline value " + std::to_string(value) + ": "));
  uint64_t last = last_value_.load();
  while (last < value && !last_value_.compare_exchange_weak(last, value)) {
  }
  return Status::ok();
}

Result<uint64_t> TimelineSemaphore::current_value() {
  HS_RETURN_IF_ERROR(failure());
  uint64_t value = 0;
  HS_RETURN_IF_ERROR(check(fn_.get_semaphore_counter_value(device_, semaphore_, &value),
                           "vkGetSemaphoreCounterValue", "failed to read timeline value: "));
  return value;
}

void TimelineSemaphore::mark_failed(Status status) {
  if (status.is_ok()) return;
  std::lock_guard lock(failure_mutex_);
  if (failure_.is_ok()) failure_ = std::move(status);
}

Status TimelineSemaphore::failure() const {
  std::lock_guard lock(failure_mutex_);
  return failure_;
}

Status TimelineSemaphore::check(VkResult result, std::string_view call, std::string_view context) {
  Status status = vk_status(result, call).with_context(context);
  if (result == VK_ERROR_DEVICE_LOST) mark_failed(status);
  return status;
}

}  // namespace hetsched
