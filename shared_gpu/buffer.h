// Buffer: a VkBuffer with its own memory, and the host ↔ device transfers
// every GPU delegate needs.
//
// Ownership: holds a shared_ptr to its SharedGpuContext (the device outlives
// the buffer). The caller must not destroy a buffer that queued GPU work
// still uses.
//
// Thread-safety: a Buffer may be read concurrently; writes (write(), upload)
// need external synchronisation, as does GPU work that uses the buffer.
#pragma once

#include <volk.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "hetsched/status.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/shared_gpu_context.h"
#include "shared_gpu/vk_handle.h"

namespace hetsched {

// Where a buffer's memory lives. Host-visible kinds are always host-coherent
// (the spec guarantees such a memory type) and persistently mapped.
enum class MemoryUsage {
  kDeviceLocal,             // GPU-only; filled and read through staging copies
  kUpload,                  // host-visible: staging for uploads
  kReadback,                // host-visible, preferably host-cached: staging for readbacks
  kDeviceLocalHostVisible,  // device-local and mapped where the device has such memory
                            // (integrated GPUs, resizable BAR), else plain host-visible
};

// The index of the first memory type allowed by `type_bits` that has
// `required | preferred` properties, else the first with `required`.
// kUnsupported when none has `required`.
Result<uint32_t> find_memory_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t type_bits,
                                  VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred);

class Buffer {
 public:
  // A buffer of `size` bytes (> 0) with `usage` (add TRANSFER_DST/SRC for
  // upload()/readback() of device-local buffers) in memory chosen by
  // `memory_usage`.
  static Result<Buffer> create(SharedGpuContext& context, VkDeviceSize size, VkBufferUsageFlags usage,
                               MemoryUsage memory_usage);

  // A device arena (memory/): device-local storage that transfers read and
  // write, host-visible too where the device has device-local mapped memory
  // (integrated GPUs, lavapipe, resizable BAR) so the host can reach small
  // tensors in it directly; plain device-local when that heap is missing or
  // too small (a 256 MiB BAR window).
  static Result<Buffer> create_arena(SharedGpuContext& context, VkDeviceSize size);

  Buffer() = default;
  Buffer(Buffer&&) noexcept = default;
  // Swaps, so the previous buffer is destroyed before its context is released.
  Buffer& operator=(Buffer&& other) noexcept {
    Buffer incoming(std::move(other));
    std::swap(context_, incoming.context_);
    std::swap(memory_, incoming.memory_);
    std::swap(buffer_, incoming.buffer_);
    std::swap(size_, incoming.size_);
    std::swap(usage_, incoming.usage_);
    std::swap(properties_, incoming.properties_);
    std::swap(mapped_, incoming.mapped_);
    return *this;
  }

  VkBuffer handle() const { return buffer_.get(); }
  VkDeviceSize size() const { return size_; }
  VkBufferUsageFlags usage() const { return usage_; }
  VkMemoryPropertyFlags memory_properties() const { return properties_; }
  // The persistent mapping of host-visible buffers; null for kDeviceLocal.
  std::byte* mapped() const { return mapped_; }
  // The whole buffer (or a range) as a descriptor binding.
  VkDescriptorBufferInfo descriptor(VkDeviceSize offset = 0, VkDeviceSize range = VK_WHOLE_SIZE) const {
    return {buffer_.get(), offset, range};
  }

 private:
  // Declared first: destroyed last. memory_ before buffer_, so the buffer is
  // destroyed before the memory bound to it is freed.
  std::shared_ptr<SharedGpuContext> context_;
  VkHandle<VkDeviceMemory> memory_;
  VkHandle<VkBuffer> buffer_;
  VkDeviceSize size_ = 0;
  VkBufferUsageFlags usage_ = 0;
  VkMemoryPropertyFlags properties_ = 0;
  std::byte* mapped_ = nullptr;
};

// Copies `data` into `dst` at `offset`. Mapped buffers are written directly;
// others through a staging buffer and a one-shot copy on `pool`, waited for.
// Afterwards the data is visible to every command submitted later to the
// context's queue. kInvalidArgument when the range does not fit or a
// device-local `dst` lacks TRANSFER_DST usage.
Status upload(CommandPool& pool, const Buffer& dst, std::span<const std::byte> data, VkDeviceSize offset = 0);

// Copies `out.size()` bytes of `src` at `offset` into `out`, after all work
// submitted earlier to the context's queue has finished writing it (a
// one-shot barrier, waited for). Read through the mapping or copied on the
// GPU into host-cached staging first, as host_access.h chooses by memory kind
// and size (the CPU reads a discrete GPU's BAR very slowly). `staging`, when
// given, is reused (and replaced when too small) so repeated readbacks
// allocate nothing. kInvalidArgument when the range does not fit or an
// unmapped `src` lacks TRANSFER_SRC usage.
Status readback(CommandPool& pool, const Buffer& src, std::span<std::byte> out, VkDeviceSize offset = 0,
                Buffer* staging = nullptr);

}  // namespace hetsched
