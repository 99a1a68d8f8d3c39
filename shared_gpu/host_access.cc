#include "shared_gpu/host_access.h"

#include <cstdio>

#include "shared_gpu/buffer.h"
#include "shared_gpu/shared_gpu_context.h"

namespace hetsched {

const char* host_access_name(HostAccess access) { return access == HostAccess::kMapped ? "mapped" : "staged"; }

const char* host_memory_kind_name(HostMemoryKind kind) {
  switch (kind) {
    case HostMemoryKind::kNotHostVisible:
      return "not host-visible";
    case HostMemoryKind::kHostCached:
      return "host-cached";
    case HostMemoryKind::kBar:
      return "BAR (device-local, uncached)";
    case HostMemoryKind::kUncachedHost:
      return "uncached host-visible";
  }
  return "?";
}

HostMemoryKind classify_host_memory(VkPhysicalDeviceType device_type, VkMemoryPropertyFlags buffer_memory) {
  if (!(buffer_memory & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) return HostMemoryKind::kNotHostVisible;
  if (buffer_memory & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) return HostMemoryKind::kHostCached;
  // Only a discrete GPU's device-local memory sits across PCIe; an integrated
  // or CPU device's "device-local" memory is system memory.
  if ((buffer_memory & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && device_type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU)
    return HostMemoryKind::kBar;
  return HostMemoryKind::kUncachedHost;
}

HostAccessPolicy host_access_policy(VkPhysicalDeviceType device_type, VkMemoryPropertyFlags buffer_memory,
                                    bool has_host_cached_memory) {
  constexpr uint64_t kAlways = HostAccessPolicy::kAlways;
  switch (classify_host_memory(device_type, buffer_memory)) {
    case HostMemoryKind::kNotHostVisible:
      return {false, 0, 0};
    case HostMemoryKind::kHostCached:
      return {true, kAlways, kAlways};
    case HostMemoryKind::kBar:
      // Staged readbacks only help when there is cached memory to stage into.
      return {true, kBarUploadMappedMaxBytes, has_host_cached_memory ? kBarReadbackMappedMaxBytes : kAlways};
    case HostMemoryKind::kUncachedHost:
      // Upload staging would be the same kind of memory: one more copy.
      // Readbacks: see kUncachedHostReadbackMappedMaxBytes.
      return {true, kAlways, has_host_cached_memory ? kUncachedHostReadbackMappedMaxBytes : kAlways};
  }
  return {false, 0, 0};
}

HostAccessPolicy host_access_policy(const SharedGpuContext& context, VkMemoryPropertyFlags buffer_memory) {
  constexpr VkMemoryPropertyFlags kCachedHost =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  const VkPhysicalDeviceMemoryProperties& memory = context.memory_properties();
  bool has_cached = false;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
    has_cached |= (memory.memoryTypes[i].propertyFlags & kCachedHost) == kCachedHost;
  return host_access_policy(context.properties().deviceType, buffer_memory, has_cached);
}

HostAccessPolicy host_access_policy(const SharedGpuContext& context, const Buffer& buffer) {
  HostAccessPolicy policy = host_access_policy(context, buffer.memory_properties());
  if (buffer.mapped() == nullptr) policy = {false, 0, 0};
  return policy;
}

HostAccess choose_upload(const HostAccessPolicy& policy, uint64_t bytes) {
  return policy.mappable && bytes <= policy.upload_mapped_max_bytes ? HostAccess::kMapped : HostAccess::kStaged;
}

HostAccess choose_readback(const HostAccessPolicy& policy, uint64_t bytes) {
  return policy.mappable && bytes <= policy.readback_mapped_max_bytes ? HostAccess::kMapped : HostAccess::kStaged;
}

std::string memory_property_names(VkMemoryPropertyFlags flags) {
  static constexpr struct {
    VkMemoryPropertyFlags bit;
    const char* name;
  } kNames[] = {{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, "DEVICE_LOCAL"},
                {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, "HOST_VISIBLE"},
                {VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, "HOST_COHERENT"},
                {VK_MEMORY_PROPERTY_HOST_CACHED_BIT, "HOST_CACHED"},
                {VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, "LAZILY_ALLOCATED"},
                {VK_MEMORY_PROPERTY_PROTECTED_BIT, "PROTECTED"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if (!(flags & bit)) continue;
    if (!out.empty()) out += '|';
    out += name;
    flags &= ~bit;
  }
  if (flags) {
    char rest[16];
    std::snprintf(rest, sizeof(rest), "0x%x", flags);
    out += (out.empty() ? "" : "|") + std::string(rest);
  }
  return out.empty() ? "none" : out;
}

}  // namespace hetsched
