// How the host moves bytes into and out of a device buffer: through the
// buffer's own mapping, or through a host-visible staging buffer and a GPU
// copy. Which is faster depends on the memory and on the size:
//
//   not host-visible            nothing to map: always staged.
//   host-visible, host-cached   the device memory is host memory (lavapipe,
//                               integrated GPUs): always mapped, both ways.
//   host-visible, uncached,     a discrete GPU's BAR. Host writes are
//   device-local, discrete      write-combined and fast: uploads mapped up
//                               to kBarUploadMappedMaxBytes. Host reads
//                               cross the bus one uncached load at a time:
//                               readbacks mapped only up to the much smaller
//                               kBarReadbackMappedMaxBytes, then staged into
//                               host-cached memory (a submit and a wait,
//                               ~45 µs, plus DMA).
//   host-visible, uncached,     system memory (or an integrated GPU's
//   anything else               uncached carve-out): a staging buffer is the
//                               same kind of memory, so uploads are always
//                               mapped; readbacks mapped up to
//                               kUncachedHostReadbackMappedMaxBytes.
//   Readbacks go mapped whatever their size where the device has no
//   host-cached memory to stage into: staging could not read faster.
//
// The thresholds are the constants at the end of this file, with the
// measurements they come from (bench/handoff_bench).
//
// Pure functions of plain values (the context overloads read the device
// type and memory types once); thread-safe.
#pragma once

#include <volk.h>

#include <cstdint>
#include <limits>
#include <string>

namespace hetsched {

class Buffer;
class SharedGpuContext;

// How the host should move a transfer's bytes.
enum class HostAccess {
  kMapped,  // memcpy through the device buffer's persistent mapping
  kStaged,  // memcpy through a host-visible staging buffer + a GPU copy
};

const char* host_access_name(HostAccess access);  // "mapped", "staged"

// Sizes up to which mapped access pays off for one kind of buffer memory.
// A transfer of `bytes` goes mapped when the memory is mappable and
// bytes <= the direction's maximum.
struct HostAccessPolicy {
  static constexpr uint64_t kAlways = std::numeric_limits<uint64_t>::max();

  bool mappable = false;  // host-visible memory (Buffer maps it persistently)
  uint64_t upload_mapped_max_bytes = 0;
  uint64_t readback_mapped_max_bytes = 0;

  bool operator==(const HostAccessPolicy&) const = default;
};

// The kinds of memory the rules above tell apart.
enum class HostMemoryKind {
  kNotHostVisible,
  kHostCached,     // the CPU's own cached memory
  kBar,            // a discrete GPU's device-local memory, mapped through PCIe
  kUncachedHost,   // other host-visible memory the CPU does not cache
};

const char* host_memory_kind_name(HostMemoryKind kind);

// Which kind `buffer_memory` (a memory type's property flags, e.g.
// Buffer::memory_properties()) is on a device of `device_type`.
HostMemoryKind classify_host_memory(VkPhysicalDeviceType device_type, VkMemoryPropertyFlags buffer_memory);

// The policy for buffers of `buffer_memory` on a device of `device_type`.
// `has_host_cached_memory`: whether the device offers a host-visible,
// host-cached memory type to stage readbacks into.
HostAccessPolicy host_access_policy(VkPhysicalDeviceType device_type, VkMemoryPropertyFlags buffer_memory,
                                    bool has_host_cached_memory);
// The same for a buffer of `buffer_memory` on `context`'s device.
HostAccessPolicy host_access_policy(const SharedGpuContext& context, VkMemoryPropertyFlags buffer_memory);
// The same for `buffer`, which must be of `context`. Not mappable when the
// buffer has no mapping (kDeviceLocal buffers are never mapped, even where
// their memory is host-visible, as on lavapipe).
HostAccessPolicy host_access_policy(const SharedGpuContext& context, const Buffer& buffer);

// kMapped only when the memory is mappable and `bytes` is at most the
// policy's maximum for the direction.
HostAccess choose_upload(const HostAccessPolicy& policy, uint64_t bytes);
HostAccess choose_readback(const HostAccessPolicy& policy, uint64_t bytes);

// "HOST_VISIBLE|HOST_COHERENT|HOST_CACHED", "DEVICE_LOCAL", "none".
std::string memory_property_names(VkMemoryPropertyFlags flags);

// Where mapped access stops paying off, for the memory kinds that have a
// limit. A transfer goes mapped when bytes <= the constant (kAlways: at
// every size). The staged path costs a submit and a timeline wait on top of
// its copies, so the crossover is that fixed cost times the mapped path's
// bandwidth, less the staged path's per-byte cost.
//
// Measured with bench/handoff_bench on the H100 machine (NVIDIA H100 80GB
// HBM3, driver 580.159.04, PCIe Gen5 x16, 128 GiB BAR1, Xeon host in a
// Firecracker VM), three runs. The staged path's fixed cost there: 43-57 µs.
// Rerun the bench on other targets and change these where they disagree.
//
// BAR uploads: no crossover up to 64 MiB. Mapped (write-combined stores over
// PCIe) ran 10-18 GB/s (0.1 µs at 256 B, 57-72 µs at 1 MiB, 6.9-7.1 ms at
// 64 MiB); staged 5-8 GB/s on top of the fixed cost (150-177 µs at 1 MiB,
// 12.6-12.8 ms at 64 MiB): the staging memcpy writes as many bytes as the
// mapped path, then the DMA comes on top.
inline constexpr uint64_t kBarUploadMappedMaxBytes = HostAccessPolicy::kAlways;
// BAR readbacks: uncached loads over PCIe ran ~30 MB/s (4.1 µs at 256 B,
// 131 µs at 4 KiB, 3.0 s at 64 MiB); staged ran 43-57 µs up to 64 KiB and
// 6-8.6 GB/s from 1 MiB. The lines crossed at 1436-1654 B; 1 KiB stays on the mapped
// side (~33 µs vs ~45 µs staged).
inline constexpr uint64_t kBarReadbackMappedMaxBytes = uint64_t{1} << 10;
// Readbacks from uncached host-visible system memory (NVIDIA's
// HOST_VISIBLE|HOST_COHERENT type; handoff_bench --memory host-visible): no
// crossover up to 64 MiB. Mapped reads ran 10-50 GB/s from 4 KiB (0.06 µs
// at 256 B, 45-71 µs at 1 MiB, 10.8-11.9 ms at 64 MiB) against staged
// 51-64 µs up to 64 KiB and 12.9-14.1 ms at 64 MiB. (Drivers that map such memory write-combined, as
// AMD's for its uncached GTT types, read it far slower: measure there.)
inline constexpr uint64_t kUncachedHostReadbackMappedMaxBytes = HostAccessPolicy::kAlways;

}  // namespace hetsched
