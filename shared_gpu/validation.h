// Vulkan validation: enabling VK_LAYER_KHRONOS_validation and collecting what
// it reports, so tests (and `hetsched --validate`) can assert that a run was
// clean.
//
// A ValidationLog is shared (shared_ptr) between the context that feeds it
// and whoever wants to read it, so it can be checked after the context (and
// its instance) is gone: vkDestroyDevice/vkDestroyInstance report leaked
// objects, and those reports arrive during destruction.
#pragma once

#include <volk.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hetsched/status.h"

namespace hetsched {

inline constexpr const char* kValidationLayerName = "VK_LAYER_KHRONOS_validation";
// Set to 1 to turn validation on for every context the process creates.
inline constexpr const char* kValidationEnvVar = "HETSCHED_VK_VALIDATION";
// Set to 0 to keep the layer's synchronization validation off where
// validation is on (scripts/asan.sh: it leaves allocations that
// LeakSanitizer cannot attribute once the loader unloads the layer).
inline constexpr const char* kSyncValidationEnvVar = "HETSCHED_VK_SYNC_VALIDATION";
// Whether kSyncValidationEnvVar leaves synchronization validation on (unset: on).
bool sync_validation_wanted();

// Counts and keeps the warnings and errors of one instance's messengers.
// Thread-safe: drivers and layers may report from any thread.
class ValidationLog {
 public:
  // Called by the messenger; also logs the message ("[gpu] validation error: ...").
  // `id` is the message's name (pMessageIdName); a few the layer blames on
  // itself are logged at debug level and not counted (validation.cc).
  void record(VkDebugUtilsMessageSeverityFlagBitsEXT severity, const char* message, const char* id = "");

  size_t error_count() const;
  size_t warning_count() const;
  // Errors + warnings.
  size_t message_count() const;
  // The messages in arrival order, each prefixed "error: " or "warning: ".
  // Only the first kMaxKept are kept (the counts keep counting).
  std::vector<std::string> messages() const;

  static constexpr size_t kMaxKept = 256;

 private:
  mutable std::mutex mutex_;
  size_t errors_ = 0;
  size_t warnings_ = 0;
  std::vector<std::string> messages_;
};

// True when HETSCHED_VK_VALIDATION is set to a value other than "0" or "".
bool validation_requested_by_env();

// True when the loader can see VK_LAYER_KHRONOS_validation (Debian package
// vulkan-validationlayers). Requires load_vulkan_loader().
bool validation_layer_available();

// A messenger create-info that reports warnings and errors to `log` (not
// retained: it must outlive every messenger made from this info). Chain it
// into VkInstanceCreateInfo::pNext to catch messages from vkCreateInstance and
// vkDestroyInstance, and pass it to DebugMessenger::create for the rest.
VkDebugUtilsMessengerCreateInfoEXT validation_messenger_info(ValidationLog* log);

// An owned VkDebugUtilsMessengerEXT. Must be destroyed before its instance.
class DebugMessenger {
 public:
  DebugMessenger() = default;
  // Creates a messenger on `instance` (created with VK_EXT_debug_utils
  // enabled) that reports to `log`; `log` must outlive the messenger.
  static Result<DebugMessenger> create(VkInstance instance, ValidationLog* log);
  ~DebugMessenger() { reset(); }
  DebugMessenger(DebugMessenger&& other) noexcept { *this = std::move(other); }
  DebugMessenger& operator=(DebugMessenger&& other) noexcept;
  void reset();

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_ = nullptr;
};

}  // namespace hetsched
