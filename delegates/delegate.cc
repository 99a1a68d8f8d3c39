#include "delegates/delegate.h"

#include <algorithm>
#include <tuple>

namespace hetsched {

std::string_view tensor_layout_name(TensorLayout layout) {
  return layout == TensorLayout::kNchw ? "NCHW" : "NHWC";
}

std::string compile_spec_value(const CompileSpecs& specs, std::string_view key, std::string fallback) {
  for (const auto& [k, v] : specs)
    if (k == key) return v;
  return fallback;
}

DevicePlacement pack_placement(const DeviceMemoryNeeds& needs, uint64_t& arena_bytes) {
  DevicePlacement placement;
  uint64_t at = 0;
  const auto take = [&](uint64_t bytes) {
    const uint64_t offset = at;
    at = (at + bytes + kDeviceArenaAlignment - 1) / kDeviceArenaAlignment * kDeviceArenaAlignment;
    return offset;
  };
  placement.scratch_offset = take(needs.scratch_bytes);
  for (uint64_t bytes : needs.input_bytes) placement.input_offsets.push_back(take(bytes));
  for (uint64_t bytes : needs.output_bytes) placement.output_offsets.push_back(take(bytes));
  arena_bytes = std::max<uint64_t>(at, 4);
  return placement;
}

Status check_placement(const DeviceMemoryNeeds& needs, const DevicePlacement& placement, uint64_t arena_bytes,
                       uint64_t min_offset_alignment) {
  const std::string what = "failed to place the island in its device arena: ";
  if (!placement.arena) return invalid_argument(what + "no arena buffer");
  if (placement.input_offsets.size() != needs.input_bytes.size() ||
      placement.output_offsets.size() != needs.output_bytes.size())
    return invalid_argument(what + "the plan places " + std::to_string(placement.input_offsets.size()) + " inputs and " +
                            std::to_string(placement.output_offsets.size()) + " outputs, the island has " +
                            std::to_string(needs.input_bytes.size()) + " and " +
                            std::to_string(needs.output_bytes.size()) + " (recompile the program)");
  const uint64_t alignment = std::max<uint64_t>({kDeviceArenaAlignment, min_offset_alignment, 1});
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> ranges;  // offset, bytes, name
  ranges.emplace_back(placement.scratch_offset, needs.scratch_bytes, "scratch");
  for (size_t i = 0; i < needs.input_bytes.size(); ++i)
    ranges.emplace_back(placement.input_offsets[i], needs.input_bytes[i], "input " + std::to_string(i));
  for (size_t i = 0; i < needs.output_bytes.size(); ++i)
    ranges.emplace_back(placement.output_offsets[i], needs.output_bytes[i], "output " + std::to_string(i));
  for (const auto& [offset, bytes, name] : ranges) {
    if (bytes == 0) continue;
    if (offset % alignment != 0)
      return invalid_argument(what + name + " at offset " + std::to_string(offset) + " is not a multiple of " +
                              std::to_string(alignment));
    if (offset > arena_bytes || bytes > arena_bytes - offset)
      return invalid_argument(what + name + " (" + std::to_string(bytes) + " bytes at " + std::to_string(offset) +
                              ") ends past the arena's " + std::to_string(arena_bytes) +
                              " bytes (recompile the program)");
  }
  std::sort(ranges.begin(), ranges.end());
  uint64_t end = 0;
  std::string last;
  for (const auto& [offset, bytes, name] : ranges) {
    if (bytes == 0) continue;
    if (offset < end) return invalid_argument(what + name + " overlaps " + last);
    end = offset + bytes;
    last = name;
  }
  return Status::ok();
}

}  // namespace hetsched

namespace hetsched {

CostEstimate Delegate::estimate(const Graph& graph, NodeId node, const DelegateCosts& costs) const {
  const OpWork work = op_work(graph, node);
  return {work.flops, work.bytes, node_seconds(costs, work)};
}

}  // namespace hetsched
