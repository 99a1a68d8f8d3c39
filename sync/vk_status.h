// VkResult → Status: the one way a failing Vulkan call becomes an error.
//
// Every Vulkan call that returns a VkResult goes through HS_VK_RETURN_IF_ERROR
// (or vk_status), so every error names the call that failed:
//   "vkCreateBuffer: VK_ERROR_OUT_OF_DEVICE_MEMORY".
// It lives in sync/, the lowest layer that calls Vulkan; shared_gpu/vk_check.h
// re-exports it for everything above.
#pragma once

#include <volk.h>

#include <string_view>

#include "hetsched/status.h"

namespace hetsched {

// "VK_ERROR_DEVICE_LOST", or "VkResult(<n>)" for a value this table lacks.
std::string_view vk_result_name(VkResult result);

// The Status for a call that returned `result`. `call` is the call's name, or
// its source text ("vkCreateBuffer(device, ...)"), cut at the first '('.
// Codes: out-of-memory, device lost, timeouts and failed initialisation are
// kUnavailable (a resource cannot be had); missing layers, extensions,
// features, drivers and formats are kUnsupported; the rest are kInternal.
// A device loss reads "vkQueueSubmit: VK_ERROR_DEVICE_LOST (device lost)".
// Returns ok for VK_SUCCESS.
Status vk_status(VkResult result, std::string_view call);

}  // namespace hetsched

// Returns from the enclosing function (which returns Status or Result<T>) when
// `call` does not return VK_SUCCESS. Non-error success codes (VK_INCOMPLETE,
// VK_TIMEOUT, ...) count as failures too: calls that expect them check the
// VkResult themselves.
#define HS_VK_RETURN_IF_ERROR(call)                                 \
  do {                                                              \
    const VkResult hs_vk_result_ = (call);                          \
    if (hs_vk_result_ != VK_SUCCESS) {                              \
      return ::hetsched::vk_status(hs_vk_result_, #call);           \
    }                                                               \
  } while (0)
