// The Vulkan delegate's compiled island: a versioned, checksummed envelope
// around the island's sub-graph (graph_serialize.h). The lowering to
// dispatches happens at init, from the graph, on the device it will run on.
//
// Layout (little-endian):
//   0  char[4]  magic "HSVK"
//   4  u32      format version (kVulkanBlobVersion)
//   8  u32      header size in bytes (24)
//  12  u32      CRC-32 (IEEE) of the payload
//  16  u64      payload size in bytes
//  24  payload  serialize_graph() of the island's sub-graph
#pragma once

#include <cstdint>
#include <span>

#include "delegates/delegate.h"
#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched::vulkan {

// Version 1: first format. Bump when a reader of the old version would
// misread a new blob.
inline constexpr uint32_t kVulkanBlobVersion = 1;

Blob encode_island_blob(const Graph& island_graph);

// The sub-graph of a blob written by encode_island_blob. Errors, each
// "failed to load Vulkan island blob: <reason>": kDataLoss for a wrong
// magic, a truncated blob, a checksum mismatch or a corrupt graph;
// kUnsupported for a newer format version.
Result<Graph> decode_island_blob(std::span<const uint8_t> blob);

// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
uint32_t crc32(std::span<const uint8_t> bytes);

}  // namespace hetsched::vulkan
