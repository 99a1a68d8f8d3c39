// What a Vulkan physical device offers, whether hetsched can use it, and which
// one a device selector picks. Backs `hetsched devices` and the device choice
// of SharedGpuContext::create.
#pragma once

#include <volk.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetsched/status.h"

namespace hetsched {

// Optional device features hetsched knows how to use. In a DeviceInfo: what
// the device supports; in a SharedGpuContext: what was enabled.
struct GpuFeatures {
  bool timeline_semaphore = false;  // required: every context has it
  bool synchronization2 = false;
  bool shader_int64 = false;
  bool shader_int16 = false;
  bool shader_int8 = false;
  bool shader_float16 = false;
  bool storage_buffer_16bit_access = false;
  bool storage_buffer_8bit_access = false;
  // VK_NV_cooperative_matrix's cooperativeMatrix: subgroup-wide matrix
  // multiply-add on the tensor cores (the only cooperative-matrix
  // extension this build's headers and glslc know; the KHR one came later).
  bool cooperative_matrix_nv = false;
};

// One matrix shape VK_NV_cooperative_matrix reports: D (m x n) = A (m x k)
// x B (k x n) + C, with the element types named "f16", "f32", "s8", ...
// Only subgroup-scoped shapes are listed.
struct CoopMatShape {
  uint32_t m = 0, n = 0, k = 0;
  std::string a_type, b_type, c_type, d_type;

  // "16x16x16 f16*f16+f32->f32".
  std::string text() const;
};

struct QueueFamilyInfo {
  VkQueueFlags flags = 0;
  uint32_t count = 0;
};

struct MemoryHeapInfo {
  VkDeviceSize size = 0;
  bool device_local = false;
};

struct DeviceInfo {
  uint32_t index = 0;  // position in vkEnumeratePhysicalDevices order: the numeric selector
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0;
  uint32_t driver_version = 0;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::vector<QueueFamilyInfo> queue_families;
  std::vector<MemoryHeapInfo> memory_heaps;
  std::vector<std::string> extensions;
  GpuFeatures features;
  // Subgroup-scoped shapes of VK_NV_cooperative_matrix; empty without it.
  std::vector<CoopMatShape> cooperative_matrix_shapes;
  bool qualifies = false;
  // Why it does not qualify, e.g. "Vulkan 1.1 < 1.2", "no timelineSemaphore
  // feature", "no compute queue" (joined with "; "). Empty when it qualifies.
  std::string reason;

  bool has_extension(std::string_view name) const;
  // The first queue family with VK_QUEUE_COMPUTE_BIT, or -1.
  int compute_queue_family() const;
};

// "discrete", "integrated", "virtual", "cpu", "other".
std::string_view device_type_name(VkPhysicalDeviceType type);
// Driver versions are vendor-encoded: NVIDIA packs 10.8.8.6 bits; the rest
// (Mesa included) use VK_MAKE_API_VERSION.
std::string format_driver_version(uint32_t vendor_id, uint32_t driver_version);

// Queries everything above for `device`, the `index`th of `instance`
// (which extension queries are fetched through).
DeviceInfo inspect_device(VkInstance instance, VkPhysicalDevice device, uint32_t index);

// The subgroup-scoped cooperative-matrix shapes of `device`, through
// `instance`'s entry point (an instance-extension command the loader does
// not export); empty when the instance lacks it.
std::vector<CoopMatShape> query_coopmat_shapes(VkInstance instance, VkPhysicalDevice device);

// The subgroup shape of f16 x f16 + f32 -> f32 products in `shapes` that
// hetsched's fp16 kernels use: 16x16x16 when offered, else the first with m
// and n dividing 64 and k dividing 16; nullptr when none fits.
const CoopMatShape* pick_f16_coopmat_shape(std::span<const CoopMatShape> shapes);
// The instance's physical devices in enumeration order.
Result<std::vector<VkPhysicalDevice>> list_physical_devices(VkInstance instance);

// Creates a short-lived instance (no validation) and describes every device.
// Errors as create_vulkan_instance, plus kUnavailable when no device exists.
Result<std::vector<DeviceInfo>> enumerate_devices();

// A table of `devices`, one row per device, then its queue families and
// memory heaps indented below it. Ends with a newline.
std::string format_devices(std::span<const DeviceInfo> devices);

// Picks a device by `selector`:
//   "auto" (or ""): the first qualifying device by type preference
//     discrete > integrated > virtual > cpu > other, then by index;
//   a number: that index;
//   anything else: the first qualifying device whose name contains it
//     (case-insensitive).
// Errors list every device seen and why each does not qualify:
//   kUnavailable  no devices, or none qualifies under "auto";
//   kNotFound     index out of range, or no name matches;
//   kUnsupported  the device chosen by index/name does not qualify.
Result<uint32_t> select_device(std::span<const DeviceInfo> devices, std::string_view selector);

// The cost model's name for a device type (delegates/cost_model.h):
// "gpu-discrete", "gpu-integrated" (integrated, virtual, other) or
// "gpu-cpu" (a Vulkan device that runs on the host, like lavapipe).
std::string_view cost_device_class(VkPhysicalDeviceType type);
// cost_device_class of the device `selector` picks (through a short-lived
// instance); "" when there is none.
std::string probe_cost_device_class(std::string_view selector);

}  // namespace hetsched
