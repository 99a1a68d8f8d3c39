#include "delegates/vulkan/island_blob.h"

#include <array>
#include <cstring>
#include <string>

#include "graph/graph_serialize.h"

namespace hetsched::vulkan {

namespace {

constexpr char kMagic[4] = {'H', 'S', 'V', 'K'};
constexpr size_t kHeaderSize = 24;

void put_u32(Blob& out, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(Blob& out, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get(std::span<const uint8_t> in, size_t at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(in[at + i]) << (8 * i);
  return v;
}

Status corrupt(const std::string& why) { return data_loss("failed to load Vulkan island blob: " + why); }

}  // namespace

uint32_t crc32(std::span<const uint8_t> bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : bytes) crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

Blob encode_island_blob(const Graph& island_graph) {
  const Blob payload = serialize_graph(island_graph);
  Blob out(kHeaderSize);
  std::memcpy(out.data(), kMagic, 4);
  put_u32(out, 4, kVulkanBlobVersion);
  put_u32(out, 8, static_cast<uint32_t>(kHeaderSize));
  put_u32(out, 12, crc32(payload));
  put_u64(out, 16, payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Result<Graph> decode_island_blob(std::span<const uint8_t> blob) {
  if (blob.size() < kHeaderSize)
    return corrupt("it has " + std::to_string(blob.size()) + " bytes, fewer than the " + std::to_string(kHeaderSize) +
                   "-byte header");
  if (std::memcmp(blob.data(), kMagic, 4) != 0) return corrupt("bad magic (not a Vulkan island blob)");
  const uint32_t version = static_cast<uint32_t>(get(blob, 4, 4));
  if (version > kVulkanBlobVersion)
    return unsupported("failed to load Vulkan island blob: format version " + std::to_string(version) +
                       " is newer than this hetsched reads (" + std::to_string(kVulkanBlobVersion) + ")");
  if (version == 0) return corrupt("format version 0");
  const uint64_t header = get(blob, 8, 4);
  const uint64_t size = get(blob, 16, 8);
  if (header < kHeaderSize || header > blob.size() || size != blob.size() - header)
    return corrupt("truncated or padded: header says " + std::to_string(header) + " + " + std::to_string(size) +
                   " bytes, the blob has " + std::to_string(blob.size()));
  const std::span<const uint8_t> payload = blob.subspan(header);
  const uint32_t expected = static_cast<uint32_t>(get(blob, 12, 4));
  if (crc32(payload) != expected) return corrupt("checksum mismatch (the blob is corrupt)");
  Result<Graph> graph = deserialize_graph(payload);
  if (!graph.is_ok())
    return Status(graph.status().code(), "failed to load Vulkan island blob: " + graph.status().message());
  return graph;
}

}  // namespace hetsched::vulkan
