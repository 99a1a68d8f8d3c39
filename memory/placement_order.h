// The orders in which the greedy placer takes buffers. The greedy result
// depends on the order only, so each heuristic is just a permutation.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "memory/arena_planner.h"
#include "memory/live_profile.h"

namespace hetsched::memory {

// Greedy by size (TFLite's GreedyBySize, ExecuTorch's greedy): largest first,
// since big buffers are the hardest to fit into gaps later; ties go to the
// earlier first step, then the lower index, so the order is deterministic.
std::vector<uint32_t> order_by_size(std::span<const BufferRequest> requests);

// Greedy by breadth (TFLite's GreedyByBreadth): steps are visited from the
// one with the most live bytes down (ties: earlier step first), and each
// step places its not yet placed buffers largest first. The widest step is
// the one that fixes the arena size, so packing it first and tightly tends
// to win on profiles whose peak holds many medium buffers. `profile` must be
// make_live_profile(requests).
std::vector<uint32_t> order_by_breadth(std::span<const BufferRequest> requests, const LiveProfile& profile);

}  // namespace hetsched::memory
