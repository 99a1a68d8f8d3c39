// Loading Vulkan through volk (no link against libvulkan: the loader is
// dlopen'ed, so a machine without Vulkan still runs the CPU paths).
//
// Entry points valid for every instance and device of the process: volk's
// process-wide function pointers are filled once, when the loader library is
// loaded, with the loader's exported trampolines (dlsym on libvulkan), not
// through any VkInstance. The Vulkan loader exports every core entry point as
// a trampoline that jumps through the dispatch table of the handle it is given
// (docs/LoaderApplicationInterface.md, "Vulkan Direct Exports": the functions
// an application linked against -lvulkan calls), so the same pointer serves
// hetsched's private instances, a host application's instance and device, and
// an instance destroyed and made again; it lives as long as libvulkan, which
// volk never unloads. Pointers from vkGetInstanceProcAddr(instance) carry no
// such promise: the spec makes them valid for that instance and its children
// only (the loader happens to return the same trampolines for core commands,
// but hands out per-instance slots for device extensions it does not know).
// Per-device tables (volkLoadDeviceTable) would skip the trampoline's one
// indirect jump per call, but every device-level call in shared_gpu/ and both
// GPU delegates would have to go through a table held by its context; the
// jump is noise beside a submit (docs/architecture.md, "Vulkan entry points").
//
// Extension entry points are not exported: volk's pointers for them stay
// null, and their users fetch them per instance or device
// (vkGetInstanceProcAddr / vkGetDeviceProcAddr), as validation.cc does for
// VK_EXT_debug_utils.
#pragma once

#include <volk.h>

#include <cstdint>
#include <string>

#include "hetsched/status.h"
#include "sync/timeline_semaphore.h"

namespace hetsched {

// Loads libvulkan and every core entry point once per process (later calls
// return the first outcome). kUnavailable, naming the Debian packages, when
// there is no loader. Thread-safe.
Status load_vulkan_loader();

// The timeline entry points for sync/'s TimelineSemaphore, from volk.
TimelineSemaphore::Functions volk_timeline_functions();

// "1.3.230" for a VK_MAKE_API_VERSION value.
std::string format_vk_version(uint32_t version);

}  // namespace hetsched
