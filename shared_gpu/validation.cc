#include "shared_gpu/validation.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "shared_gpu/vk_check.h"

namespace hetsched {
namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT type,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                     void* user_data) {
  static_cast<ValidationLog*>(user_data)->record(severity, data && data->pMessage ? data->pMessage : "",
                                                 data && data->pMessageIdName ? data->pMessageIdName : "");
  // VK_FALSE: the call that triggered the message goes on (the spec reserves VK_TRUE for layer tests).
  return VK_FALSE;
}

}  // namespace

// Messages the layer itself calls its own bug, not the application's: the
// timeline-semaphore tracker gives up after 10 s when a wait on one thread
// returns before another thread's host signal reaches its bookkeeping
// ("Timeout waiting for timeline semaphore state to update. This is most
// likely a validation bug."). Seen once in CI under load, on
// TimelineSemaphoreTest.SpinningWaitSeesLateSignalAndStillTimesOut.
constexpr const char* kLayerBugIds[] = {"UNASSIGNED-VkSemaphore-state-timeout"};

void ValidationLog::record(VkDebugUtilsMessageSeverityFlagBitsEXT severity, const char* message, const char* id) {
  for (const char* bug : kLayerBugIds)
    if (std::strcmp(id, bug) == 0) {
      spdlog::debug("[gpu] validation layer's own fault, not counted: {}", message);
      return;
    }
  const bool error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
  if (error) {
    spdlog::error("[gpu] validation error: {}", message);
  } else {
    spdlog::warn("[gpu] validation warning: {}", message);
  }
  std::lock_guard lock(mutex_);
  (error ? errors_ : warnings_)++;
  if (messages_.size() < kMaxKept) messages_.push_back(std::string(error ? "error: " : "warning: ") + message);
}

size_t ValidationLog::error_count() const {
  std::lock_guard lock(mutex_);
  return errors_;
}

size_t ValidationLog::warning_count() const {
  std::lock_guard lock(mutex_);
  return warnings_;
}

size_t ValidationLog::message_count() const {
  std::lock_guard lock(mutex_);
  return errors_ + warnings_;
}

std::vector<std::string> ValidationLog::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

bool sync_validation_wanted() {
  const char* value = std::getenv(kSyncValidationEnvVar);
  return value == nullptr || std::strcmp(value, "0") != 0;
}

bool validation_requested_by_env() {
  const char* value = std::getenv(kValidationEnvVar);
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

bool validation_layer_available() {
  uint32_t count = 0;
  if (vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const VkLayerProperties& layer : layers) {
    if (std::strcmp(layer.layerName, kValidationLayerName) == 0) return true;
  }
  return false;
}

VkDebugUtilsMessengerCreateInfoEXT validation_messenger_info(ValidationLog* log) {
  VkDebugUtilsMessengerCreateInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_validation_message;
  info.pUserData = log;
  return info;
}

Result<DebugMessenger> DebugMessenger::create(VkInstance instance, ValidationLog* log) {
  // The loader hands out debug-utils entry points only for instances that
  // enabled the extension, so they are fetched from this instance, not volk.
  auto create_fn = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  auto destroy_fn = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  if (create_fn == nullptr || destroy_fn == nullptr) {
    return unsupported("failed to create debug messenger: VK_EXT_debug_utils is not enabled on the instance");
  }
  const VkDebugUtilsMessengerCreateInfoEXT info = validation_messenger_info(log);
  DebugMessenger messenger;
  HS_RETURN_IF_ERROR(
      vk_status(create_fn(instance, &info, nullptr, &messenger.messenger_), "vkCreateDebugUtilsMessengerEXT"));
  messenger.instance_ = instance;
  messenger.destroy_ = destroy_fn;
  return messenger;
}

DebugMessenger& DebugMessenger::operator=(DebugMessenger&& other) noexcept {
  if (this != &other) {
    reset();
    instance_ = std::exchange(other.instance_, VK_NULL_HANDLE);
    messenger_ = std::exchange(other.messenger_, VK_NULL_HANDLE);
    destroy_ = std::exchange(other.destroy_, nullptr);
  }
  return *this;
}

void DebugMessenger::reset() {
  if (messenger_ != VK_NULL_HANDLE) destroy_(instance_, messenger_, nullptr);
  instance_ = VK_NULL_HANDLE;
  messenger_ = VK_NULL_HANDLE;
  destroy_ = nullptr;
}

}  // namespace hetsched
