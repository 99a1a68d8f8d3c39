// The Vulkan error macro for shared_gpu/ and the GPU delegates:
//   HS_VK_RETURN_IF_ERROR(vkCreateBuffer(device, &info, nullptr, &buffer));
// returns "vkCreateBuffer: VK_ERROR_OUT_OF_DEVICE_MEMORY" as a Status from the
// enclosing function. The table itself lives in sync/ (the lowest layer that
// calls Vulkan), so sync/ and everything above share one spelling.
#pragma once

#include "sync/vk_status.h"  // IWYU pragma: export
