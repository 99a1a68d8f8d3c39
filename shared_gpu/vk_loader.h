// Loading Vulkan through volk (no link against libvulkan: the loader is
// dlopen'ed, so a machine without Vulkan still runs the CPU paths).
//
// Entry points are volk's process-wide function pointers, loaded once through
// the first instance. They are the loader's dispatching trampolines, which
// serve every instance and device of the process, so several contexts (and
// host-made devices) can coexist. Extension entry points that the loader only
// hands out per instance (VK_EXT_debug_utils) are fetched per instance by
// their users instead.
#pragma once

#include <volk.h>

#include <cstdint>
#include <string>

#include "hetsched/status.h"
#include "sync/timeline_semaphore.h"

namespace hetsched {

// Loads libvulkan once per process (later calls return the first outcome).
// kUnavailable, naming the Debian packages, when there is no loader.
// Thread-safe.
Status load_vulkan_loader();

// Loads the instance- and device-level entry points through `instance`; only
// the first call in the process does anything. Call after creating an
// instance yourself (host applications that then borrow() it need not: borrow
// calls this). Thread-safe.
void load_vulkan_instance(VkInstance instance);

// The timeline entry points for sync/'s TimelineSemaphore, from volk.
TimelineSemaphore::Functions volk_timeline_functions();

// "1.3.230" for a VK_MAKE_API_VERSION value.
std::string format_vk_version(uint32_t version);

}  // namespace hetsched
