#include "shared_gpu/buffer.h"

#include "shared_gpu/host_access.h"

#include <algorithm>

#include <cstdio>
#include <cstring>
#include <string>

#include "shared_gpu/vk_check.h"
#include "sync/fault_injection.h"

namespace hetsched {
namespace {

struct MemoryChoice {
  VkMemoryPropertyFlags required;
  VkMemoryPropertyFlags preferred;
  bool mapped;
};

MemoryChoice memory_choice(MemoryUsage usage) {
  constexpr VkMemoryPropertyFlags kHost = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  switch (usage) {
    case MemoryUsage::kDeviceLocal:
      return {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, false};
    case MemoryUsage::kUpload:
      return {kHost, 0, true};
    case MemoryUsage::kReadback:
      return {kHost, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, true};
    case MemoryUsage::kDeviceLocalHostVisible:
      return {kHost, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, true};
  }
  return {0, 0, false};
}

Status check_range(const Buffer& buffer, VkDeviceSize offset, size_t bytes, const char* verb) {
  if (offset > buffer.size() || bytes > buffer.size() - offset) {
    return invalid_argument(std::string("failed to ") + verb + " " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + ": the buffer holds " + std::to_string(buffer.size()));
  }
  return Status::ok();
}

}  // namespace

Result<uint32_t> find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t type_bits,
                                  VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  for (VkMemoryPropertyFlags wanted : {required | preferred, required}) {
    for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
      if ((type_bits & (1u << i)) != 0 && (memory.memoryTypes[i].propertyFlags & wanted) == wanted) return i;
    }
  }
  char flags[16];
  std::snprintf(flags, sizeof(flags), "0x%x", required);
  return unsupported(std::string("failed to find a memory type: none of the allowed types has properties ") + flags);
}

namespace {
bool has_device_local_host_visible(const VkPhysicalDeviceMemoryProperties& memory) {
  constexpr VkMemoryPropertyFlags kWanted =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i)
    if ((memory.memoryTypes[i].propertyFlags & kWanted) == kWanted) return true;
  return false;
}
}  // namespace

Result<Buffer> Buffer::create_arena(SharedGpuContext& context, VkDeviceSize size) {
  constexpr VkBufferUsageFlags kUsage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  size = std::max<VkDeviceSize>(size, 4);
  if (has_device_local_host_visible(context.memory_properties())) {
    Result<Buffer> mapped = create(context, size, kUsage, MemoryUsage::kDeviceLocalHostVisible);
    // Out of host-visible device memory: plain device memory may remain. A lost device has none.
    if (mapped.is_ok() || !context.lost().is_ok()) return mapped;
  }
  return create(context, size, kUsage, MemoryUsage::kDeviceLocal);
}

Result<Buffer> Buffer::create(SharedGpuContext& context, VkDeviceSize size, VkBufferUsageFlags usage,
                              MemoryUsage memory_usage) {
  if (size == 0) return invalid_argument("failed to create buffer: size is 0");
  const VkDevice device = context.device();
  Buffer buffer;
  buffer.context_ = context.shared_from_this();
  buffer.size_ = size;
  buffer.usage_ = usage;

  VkBufferCreateInfo create_info{};
  create_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  create_info.size = size;
  create_info.usage = usage;
  create_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer handle = VK_NULL_HANDLE;
  HS_VK_RETURN_IF_ERROR(vkCreateBuffer(device, &create_info, nullptr, &handle));
  buffer.buffer_ = VkHandle<VkBuffer>(device, handle);

  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(device, handle, &requirements);
  const MemoryChoice choice = memory_choice(memory_usage);
  HS_ASSIGN_OR_RETURN(const uint32_t type, find_memory_type(context.memory_properties(), requirements.memoryTypeBits,
                                                            choice.required, choice.preferred));
  VkMemoryAllocateInfo allocate_info{};
  allocate_info.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate_info.allocationSize = requirements.size;
  allocate_info.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkResult allocated = injected_fault(FaultPoint::kAllocate);
  if (allocated == VK_SUCCESS) allocated = vkAllocateMemory(device, &allocate_info, nullptr, &memory);
  if (allocated != VK_SUCCESS) {
    // `buffer` frees the VkBuffer made above as it goes out of scope.
    Status status = vk_status(allocated, "vkAllocateMemory")
                        .with_context("failed to allocate " + std::to_string(requirements.size) + " bytes of GPU memory: ");
    context.mark_lost_on(allocated, status);
    return status;
  }
  buffer.memory_ = VkHandle<VkDeviceMemory>(device, memory);
  buffer.properties_ = context.memory_properties().memoryTypes[type].propertyFlags;
  HS_VK_RETURN_IF_ERROR(vkBindBufferMemory(device, handle, memory, 0));
  if (choice.mapped) {
    void* mapped = nullptr;
    HS_VK_RETURN_IF_ERROR(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, &mapped));
    buffer.mapped_ = static_cast<std::byte*>(mapped);
  }
  return buffer;
}

Status upload(CommandPool& pool, const Buffer& dst, std::span<const std::byte> data, VkDeviceSize offset) {
  HS_RETURN_IF_ERROR(check_range(dst, offset, data.size(), "upload"));
  if (data.empty()) return Status::ok();
  if (dst.mapped() != nullptr) {
    // Host writes to coherent memory before a submit are visible to it.
    std::memcpy(dst.mapped() + offset, data.data(), data.size());
    return Status::ok();
  }
  if ((dst.usage() & VK_BUFFER_USAGE_TRANSFER_DST_BIT) == 0) {
    return invalid_argument("failed to upload to a device-local buffer: it lacks VK_BUFFER_USAGE_TRANSFER_DST_BIT");
  }
  HS_ASSIGN_OR_RETURN(Buffer staging, Buffer::create(pool.context(), data.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                                     MemoryUsage::kUpload));
  std::memcpy(staging.mapped(), data.data(), data.size());
  return pool.run_one_shot([&](VkCommandBuffer cmd) {
    // Earlier users of dst finish before the copy overwrites it.
    record_memory_barrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                          VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_TRANSFER_WRITE_BIT);
    const VkBufferCopy region{0, offset, data.size()};
    vkCmdCopyBuffer(cmd, staging.handle(), dst.handle(), 1, &region);
    record_memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
  });
}

Status readback(CommandPool& pool, const Buffer& src, std::span<std::byte> out, VkDeviceSize offset, Buffer* staging) {
  HS_RETURN_IF_ERROR(check_range(src, offset, out.size(), "read back"));
  if (out.empty()) return Status::ok();
  const bool can_copy = (src.usage() & VK_BUFFER_USAGE_TRANSFER_SRC_BIT) != 0;
  // Mapped or staged by memory kind and size (host_access.h); a buffer the
  // GPU cannot copy from is read mapped whatever it costs.
  const HostAccessPolicy policy = host_access_policy(pool.context(), src);
  if (policy.mappable && (!can_copy || choose_readback(policy, out.size()) == HostAccess::kMapped)) {
    HS_RETURN_IF_ERROR(pool.run_one_shot([](VkCommandBuffer cmd) {
      record_memory_barrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                            VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    }));
    std::memcpy(out.data(), src.mapped() + offset, out.size());
    return Status::ok();
  }
  if ((src.usage() & VK_BUFFER_USAGE_TRANSFER_SRC_BIT) == 0) {
    return invalid_argument("failed to read back a device-local buffer: it lacks VK_BUFFER_USAGE_TRANSFER_SRC_BIT");
  }
  Buffer local;
  if (staging == nullptr || staging->size() < out.size() || staging->mapped() == nullptr) {
    HS_ASSIGN_OR_RETURN(local, Buffer::create(pool.context(), out.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                              MemoryUsage::kReadback));
    if (staging != nullptr) *staging = std::move(local);
  }
  Buffer& stage = staging != nullptr ? *staging : local;
  HS_RETURN_IF_ERROR(pool.run_one_shot([&](VkCommandBuffer cmd) {
    record_memory_barrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    const VkBufferCopy region{offset, 0, out.size()};
    vkCmdCopyBuffer(cmd, src.handle(), stage.handle(), 1, &region);
    record_memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  }));
  std::memcpy(out.data(), stage.mapped(), out.size());
  return Status::ok();
}

}  // namespace hetsched
