// Which nodes the Vulkan delegate runs, and the reason when it will not.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "delegates/delegate.h"
#include "graph/graph.h"

namespace hetsched::vulkan {

// The device limits a node must fit.
struct DeviceLimits {
  // Bytes one storage-buffer binding may span. Default: the Vulkan spec's
  // guaranteed minimum (2^27), which is also lavapipe's value.
  uint64_t max_storage_buffer_range = uint64_t{1} << 27;
  // Workgroups per grid dimension (the spec's guaranteed minimum).
  uint32_t max_workgroups_per_dim = 65535;
  // The storageBuffer16BitAccess feature, enabled on the context (what a
  // borrowed context's host enabled): f16 tensors, which only Cast reads or
  // writes, need it.
  bool storage_buffer_16bit_access = false;
  // storageBuffer8BitAccess, likewise: bool tensors (Cast's) need it.
  bool storage_buffer_8bit_access = false;
};

// The ops the delegate implements (f32 tensors; Cast between f32, f16, i32,
// i64 and bool), in the foundation op set's order.
std::span<const std::string_view> vulkan_ops();

// Whether node `node` of `graph` (shape-inferred) runs on the delegate.
// Reasons name what is missing: "op X not implemented", "dtype i64 not
// supported (input 'x')", "f16 input 'x' needs storageBuffer16BitAccess,
// which this device lacks" (bool: storageBuffer8BitAccess), "tensor 'x' of N bytes exceeds
// maxStorageBufferRange M", "weight W must be a constant", ...
Capability vulkan_supports(const Graph& graph, NodeId node, const DeviceLimits& limits);

}  // namespace hetsched::vulkan
