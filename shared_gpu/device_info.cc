#include "shared_gpu/device_info.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "shared_gpu/instance.h"
#include "shared_gpu/vk_check.h"
#include "shared_gpu/vk_loader.h"

namespace hetsched {
namespace {

constexpr uint32_t kNvidiaVendorId = 0x10DE;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string hex4(uint32_t value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "%04x", value);
  return buffer;
}

std::string format_bytes(VkDeviceSize bytes) {
  char buffer[32];
  const double gib = static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
  if (gib >= 1.0) {
    std::snprintf(buffer, sizeof(buffer), "%.1f GiB", gib);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.0f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return buffer;
}

std::string queue_flags_text(VkQueueFlags flags) {
  std::string out;
  auto add = [&](VkQueueFlags bit, const char* name) {
    if ((flags & bit) == 0) return;
    if (!out.empty()) out += "|";
    out += name;
  };
  add(VK_QUEUE_GRAPHICS_BIT, "graphics");
  add(VK_QUEUE_COMPUTE_BIT, "compute");
  add(VK_QUEUE_TRANSFER_BIT, "transfer");
  add(VK_QUEUE_SPARSE_BINDING_BIT, "sparse");
  add(VK_QUEUE_PROTECTED_BIT, "protected");
  return out.empty() ? "none" : out;
}

// The one-line description used in selection errors.
std::string describe(const DeviceInfo& device) {
  return "#" + std::to_string(device.index) + " '" + device.name + "' (" + std::string(device_type_name(device.type)) +
         ", Vulkan " + format_vk_version(device.api_version) + "): " +
         (device.qualifies ? "qualifies" : device.reason);
}

std::string describe_all(std::span<const DeviceInfo> devices) {
  std::string out = "devices seen: ";
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i > 0) out += "; ";
    out += describe(devices[i]);
  }
  return out;
}

int type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

}  // namespace

bool DeviceInfo::has_extension(std::string_view extension) const {
  return std::find(extensions.begin(), extensions.end(), extension) != extensions.end();
}

int DeviceInfo::compute_queue_family() const {
  for (size_t i = 0; i < queue_families.size(); ++i) {
    if ((queue_families[i].flags & VK_QUEUE_COMPUTE_BIT) != 0 && queue_families[i].count > 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string_view device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

std::string format_driver_version(uint32_t vendor_id, uint32_t driver_version) {
  if (vendor_id == kNvidiaVendorId) {
    return std::to_string((driver_version >> 22) & 0x3ff) + "." + std::to_string((driver_version >> 14) & 0xff) + "." +
           std::to_string((driver_version >> 6) & 0xff) + "." + std::to_string(driver_version & 0x3f);
  }
  return format_vk_version(driver_version);
}

std::string CoopMatShape::text() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + a_type + "*" + b_type + "+" +
         c_type + "->" + d_type;
}

const CoopMatShape* pick_f16_coopmat_shape(std::span<const CoopMatShape> shapes) {
  const CoopMatShape* fit = nullptr;
  for (const CoopMatShape& s : shapes) {
    if (s.a_type != "f16" || s.b_type != "f16" || s.c_type != "f32" || s.d_type != "f32") continue;
    if (s.m == 16 && s.n == 16 && s.k == 16) return &s;
    if (fit == nullptr && s.m > 0 && s.n > 0 && s.k > 0 && 64 % s.m == 0 && 64 % s.n == 0 && 16 % s.k == 0) fit = &s;
  }
  return fit;
}

namespace {

std::string component_type_name(VkComponentTypeNV type) {
  switch (type) {
    case VK_COMPONENT_TYPE_FLOAT16_NV: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_NV: return "f32";
    case VK_COMPONENT_TYPE_FLOAT64_NV: return "f64";
    case VK_COMPONENT_TYPE_SINT8_NV: return "s8";
    case VK_COMPONENT_TYPE_SINT16_NV: return "s16";
    case VK_COMPONENT_TYPE_SINT32_NV: return "s32";
    case VK_COMPONENT_TYPE_SINT64_NV: return "s64";
    case VK_COMPONENT_TYPE_UINT8_NV: return "u8";
    case VK_COMPONENT_TYPE_UINT16_NV: return "u16";
    case VK_COMPONENT_TYPE_UINT32_NV: return "u32";
    case VK_COMPONENT_TYPE_UINT64_NV: return "u64";
    default: return "type" + std::to_string(static_cast<int>(type));
  }
}

}  // namespace

std::vector<CoopMatShape> query_coopmat_shapes(VkInstance instance, VkPhysicalDevice device) {
  std::vector<CoopMatShape> out;
  auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (get == nullptr) return out;
  uint32_t count = 0;
  if (get(device, &count, nullptr) != VK_SUCCESS) return out;
  std::vector<VkCooperativeMatrixPropertiesNV> properties(count);
  for (VkCooperativeMatrixPropertiesNV& p : properties) p.sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
  if (get(device, &count, properties.data()) != VK_SUCCESS) return out;
  for (uint32_t i = 0; i < count; ++i) {
    const VkCooperativeMatrixPropertiesNV& p = properties[i];
    if (p.scope != VK_SCOPE_SUBGROUP_NV) continue;
    out.push_back({p.MSize, p.NSize, p.KSize, component_type_name(p.AType), component_type_name(p.BType),
                   component_type_name(p.CType), component_type_name(p.DType)});
  }
  return out;
}

DeviceInfo inspect_device(VkInstance instance, VkPhysicalDevice device, uint32_t index) {
  DeviceInfo info;
  info.index = index;
  VkPhysicalDeviceProperties properties{};
  vkGetPhysicalDeviceProperties(device, &properties);
  info.name = properties.deviceName;
  info.type = properties.deviceType;
  info.api_version = properties.apiVersion;
  info.driver_version = properties.driverVersion;
  info.vendor_id = properties.vendorID;
  info.device_id = properties.deviceID;

  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(device, &count, families.data());
  for (const VkQueueFamilyProperties& family : families) {
    info.queue_families.push_back({family.queueFlags, family.queueCount});
  }

  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(device, &memory);
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    info.memory_heaps.push_back(
        {memory.memoryHeaps[i].size, (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});
  }

  count = 0;
  if (vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr) == VK_SUCCESS) {
    std::vector<VkExtensionProperties> extensions(count);
    if (vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data()) == VK_SUCCESS) {
      for (const VkExtensionProperties& e : extensions) info.extensions.push_back(e.extensionName);
    }
  }

  // The 1.1/1.2 feature structs may only be chained for devices of that version.
  if (info.api_version >= kMinVulkanVersion) {
    VkPhysicalDeviceVulkan11Features v11{};
    v11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    VkPhysicalDeviceVulkan12Features v12{};
    v12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    v11.pNext = &v12;
    VkPhysicalDeviceSynchronization2Features sync2{};
    sync2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SYNCHRONIZATION_2_FEATURES;
    const bool has_sync2 =
        info.api_version >= VK_API_VERSION_1_3 || info.has_extension(VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME);
    if (has_sync2) v12.pNext = &sync2;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{};
    coopmat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    const bool has_coopmat = info.has_extension(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (has_coopmat) {
      coopmat.pNext = v12.pNext;
      v12.pNext = &coopmat;
    }
    VkPhysicalDeviceFeatures2 features{};
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &v11;
    vkGetPhysicalDeviceFeatures2(device, &features);
    info.features.timeline_semaphore = v12.timelineSemaphore;
    info.features.synchronization2 = has_sync2 && sync2.synchronization2;
    info.features.shader_int64 = features.features.shaderInt64;
    info.features.shader_int16 = features.features.shaderInt16;
    info.features.shader_int8 = v12.shaderInt8;
    info.features.shader_float16 = v12.shaderFloat16;
    info.features.storage_buffer_16bit_access = v11.storageBuffer16BitAccess;
    info.features.storage_buffer_8bit_access = v12.storageBuffer8BitAccess;
    info.features.cooperative_matrix_nv = has_coopmat && coopmat.cooperativeMatrix;
    if (info.features.cooperative_matrix_nv) info.cooperative_matrix_shapes = query_coopmat_shapes(instance, device);
  }

  std::vector<std::string> reasons;
  if (info.api_version < kMinVulkanVersion) {
    reasons.push_back("Vulkan " + std::to_string(VK_API_VERSION_MAJOR(info.api_version)) + "." +
                      std::to_string(VK_API_VERSION_MINOR(info.api_version)) + " < 1.2");
  } else if (!info.features.timeline_semaphore) {
    reasons.push_back("no timelineSemaphore feature");
  }
  if (info.compute_queue_family() < 0) reasons.push_back("no compute queue");
  info.qualifies = reasons.empty();
  for (size_t i = 0; i < reasons.size(); ++i) info.reason += (i > 0 ? "; " : "") + reasons[i];
  return info;
}

Result<std::vector<VkPhysicalDevice>> list_physical_devices(VkInstance instance) {
  uint32_t count = 0;
  HS_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance, &count, nullptr));
  std::vector<VkPhysicalDevice> devices(count);
  HS_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance, &count, devices.data()));
  devices.resize(count);
  return devices;
}

Result<std::vector<DeviceInfo>> enumerate_devices() {
  InstanceOptions options;
  options.app_name = "hetsched devices";
  HS_ASSIGN_OR_RETURN(VkInstance instance, create_vulkan_instance(options));
  Result<std::vector<VkPhysicalDevice>> physical = list_physical_devices(instance);
  std::vector<DeviceInfo> devices;
  if (physical.is_ok()) {
    for (size_t i = 0; i < physical->size(); ++i) {
      devices.push_back(inspect_device(instance, (*physical)[i], static_cast<uint32_t>(i)));
    }
  }
  vkDestroyInstance(instance, nullptr);
  if (!physical.is_ok()) return physical.status().with_context("failed to list Vulkan devices: ");
  if (devices.empty()) {
    return unavailable(
        "failed to list Vulkan devices: the loader found no device; install mesa-vulkan-drivers for lavapipe, "
        "a CPU implementation");
  }
  return devices;
}

std::string format_devices(std::span<const DeviceInfo> devices) {
  size_t name_width = 4;
  for (const DeviceInfo& d : devices) name_width = std::max(name_width, d.name.size());
  auto pad = [](std::string text, size_t width) {
    if (text.size() < width) text.append(width - text.size(), ' ');
    return text;
  };
  std::string out = pad("#", 3) + pad("name", name_width + 2) + pad("type", 12) + pad("api", 10) +
                    pad("driver", 14) + pad("vendor:device", 15) + "usable\n";
  for (const DeviceInfo& d : devices) {
    out += pad(std::to_string(d.index), 3) + pad(d.name, name_width + 2) +
           pad(std::string(device_type_name(d.type)), 12) + pad(format_vk_version(d.api_version), 10) +
           pad(format_driver_version(d.vendor_id, d.driver_version), 14) +
           pad(hex4(d.vendor_id) + ":" + hex4(d.device_id), 15) + (d.qualifies ? "yes" : "no: " + d.reason) + "\n";
    for (size_t i = 0; i < d.queue_families.size(); ++i) {
      out += "   queue family " + std::to_string(i) + ": " + queue_flags_text(d.queue_families[i].flags) + " x" +
             std::to_string(d.queue_families[i].count) + "\n";
    }
    for (size_t i = 0; i < d.memory_heaps.size(); ++i) {
      out += "   memory heap " + std::to_string(i) + ": " + format_bytes(d.memory_heaps[i].size) +
             (d.memory_heaps[i].device_local ? " device-local" : "") + "\n";
    }
    if (!d.cooperative_matrix_shapes.empty()) {
      out += "   cooperative matrices (VK_NV_cooperative_matrix, subgroup):";
      for (size_t i = 0; i < d.cooperative_matrix_shapes.size(); ++i)
        out += (i == 0 ? " " : ", ") + d.cooperative_matrix_shapes[i].text();
      out += "\n";
    }
  }
  return out;
}

Result<uint32_t> select_device(std::span<const DeviceInfo> devices, std::string_view selector) {
  if (devices.empty()) {
    return unavailable(
        "failed to select Vulkan device: no devices found; install mesa-vulkan-drivers for lavapipe, "
        "a CPU implementation");
  }
  if (selector.empty() || selector == "auto") {
    const DeviceInfo* best = nullptr;
    for (const DeviceInfo& d : devices) {
      if (d.qualifies && (best == nullptr || type_rank(d.type) < type_rank(best->type))) best = &d;
    }
    if (best == nullptr) {
      return unavailable("failed to select Vulkan device: none qualifies (hetsched needs Vulkan 1.2 with "
                         "timelineSemaphore and a compute queue); " +
                         describe_all(devices));
    }
    return best->index;
  }

  const DeviceInfo* chosen = nullptr;
  if (std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); })) {
    uint64_t index = 0;
    const auto [end, error] = std::from_chars(selector.data(), selector.data() + selector.size(), index);
    if (error != std::errc() || end != selector.data() + selector.size() || index >= devices.size()) {
      return not_found("failed to select Vulkan device " + std::string(selector) + ": no device with that index; " +
                       describe_all(devices));
    }
    chosen = &devices[index];
  } else {
    const std::string needle = lower(selector);
    for (const DeviceInfo& d : devices) {
      if (lower(d.name).find(needle) == std::string::npos) continue;
      if (d.qualifies) return d.index;
      if (chosen == nullptr) chosen = &d;
    }
    if (chosen == nullptr) {
      return not_found("failed to select Vulkan device '" + std::string(selector) + "': no device name contains it; " +
                       describe_all(devices));
    }
  }
  if (!chosen->qualifies) {
    return unsupported("failed to select Vulkan device '" + std::string(selector) + "': " + chosen->name + ": " +
                       chosen->reason + "; " + describe_all(devices));
  }
  return chosen->index;
}

std::string_view cost_device_class(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "gpu-discrete";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "gpu-cpu";
    default: return "gpu-integrated";
  }
}

std::string probe_cost_device_class(std::string_view selector) {
  Result<std::vector<DeviceInfo>> devices = enumerate_devices();
  if (!devices.is_ok()) return "";
  Result<uint32_t> chosen = select_device(*devices, selector);
  if (!chosen.is_ok()) return "";
  return std::string(cost_device_class((*devices)[*chosen].type));
}

}  // namespace hetsched
