#include "sync/vk_status.h"

#include <string>

namespace hetsched {

std::string_view vk_result_name(VkResult result) {
  switch (result) {
#define HS_VK_RESULT_CASE(name) \
  case name:                    \
    return #name;
    HS_VK_RESULT_CASE(VK_SUCCESS)
    HS_VK_RESULT_CASE(VK_NOT_READY)
    HS_VK_RESULT_CASE(VK_TIMEOUT)
    HS_VK_RESULT_CASE(VK_EVENT_SET)
    HS_VK_RESULT_CASE(VK_EVENT_RESET)
    HS_VK_RESULT_CASE(VK_INCOMPLETE)
    HS_VK_RESULT_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    HS_VK_RESULT_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    HS_VK_RESULT_CASE(VK_ERROR_INITIALIZATION_FAILED)
    HS_VK_RESULT_CASE(VK_ERROR_DEVICE_LOST)
    HS_VK_RESULT_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    HS_VK_RESULT_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    HS_VK_RESULT_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    HS_VK_RESULT_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    HS_VK_RESULT_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    HS_VK_RESULT_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    HS_VK_RESULT_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    HS_VK_RESULT_CASE(VK_ERROR_FRAGMENTED_POOL)
    HS_VK_RESULT_CASE(VK_ERROR_UNKNOWN)
    HS_VK_RESULT_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    HS_VK_RESULT_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    HS_VK_RESULT_CASE(VK_ERROR_FRAGMENTATION)
    HS_VK_RESULT_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    HS_VK_RESULT_CASE(VK_PIPELINE_COMPILE_REQUIRED)
    HS_VK_RESULT_CASE(VK_ERROR_SURFACE_LOST_KHR)
    HS_VK_RESULT_CASE(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
    HS_VK_RESULT_CASE(VK_SUBOPTIMAL_KHR)
    HS_VK_RESULT_CASE(VK_ERROR_OUT_OF_DATE_KHR)
    HS_VK_RESULT_CASE(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
    HS_VK_RESULT_CASE(VK_ERROR_VALIDATION_FAILED_EXT)
    HS_VK_RESULT_CASE(VK_ERROR_INVALID_SHADER_NV)
    HS_VK_RESULT_CASE(VK_ERROR_NOT_PERMITTED_KHR)
    HS_VK_RESULT_CASE(VK_THREAD_IDLE_KHR)
    HS_VK_RESULT_CASE(VK_THREAD_DONE_KHR)
    HS_VK_RESULT_CASE(VK_OPERATION_DEFERRED_KHR)
    HS_VK_RESULT_CASE(VK_OPERATION_NOT_DEFERRED_KHR)
    HS_VK_RESULT_CASE(VK_ERROR_COMPRESSION_EXHAUSTED_EXT)
#undef HS_VK_RESULT_CASE
    default:
      break;
  }
  // Results from extensions newer than these headers: the caller still sees the number.
  thread_local std::string unknown;
  unknown = "VkResult(" + std::to_string(static_cast<int>(result)) + ")";
  return unknown;
}

Status vk_status(VkResult result, std::string_view call) {
  if (result == VK_SUCCESS) return Status::ok();
  const size_t paren = call.find('(');
  if (paren != std::string_view::npos) call = call.substr(0, paren);
  while (!call.empty() && call.back() == ' ') call.remove_suffix(1);
  std::string message = std::string(call) + ": " + std::string(vk_result_name(result));
  // Said in words too: a lost device is the one error every later call repeats.
  if (result == VK_ERROR_DEVICE_LOST) message += " (device lost)";
  switch (result) {
    case VK_TIMEOUT:
    case VK_NOT_READY:
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_TOO_MANY_OBJECTS:
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_DEVICE_LOST:
    case VK_ERROR_MEMORY_MAP_FAILED:
      return unavailable(std::move(message));
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      return unsupported(std::move(message));
    default:
      return internal_error(std::move(message));
  }
}

}  // namespace hetsched
