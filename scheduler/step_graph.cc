#include "scheduler/step_graph.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace hetsched {

namespace {
// Where a step reads or writes: (kind, tensor, island).
enum class Where : uint8_t { kHostSlot, kDeviceInput, kDeviceOutput };
using Location = std::tuple<Where, int, int>;
}  // namespace

StepGraph build_step_graph(const Program& program, const std::vector<bool>& device_island) {
  const size_t n = program.steps.size();
  StepGraph g;
  g.deps.resize(n);
  g.users.resize(n);
  // The island that produced each tensor, for device copies (the step names
  // only the reading island).
  std::vector<int> producer(program.tensors.size(), -1);
  for (size_t i = 0; i < program.islands.size(); ++i)
    for (int t : program.islands[i].outputs) producer[static_cast<size_t>(t)] = static_cast<int>(i);

  std::map<Location, int> writer;
  const auto read = [&](size_t s, const Location& loc) {
    auto it = writer.find(loc);
    if (it != writer.end()) g.deps[s].push_back(it->second);
  };
  for (size_t s = 0; s < n; ++s) {
    const ProgramStep& step = program.steps[s];
    std::vector<Location> writes;
    if (step.kind == StepKind::kRunIsland) {
      const ProgramIsland& island = program.islands[static_cast<size_t>(step.island)];
      const bool device = device_island[static_cast<size_t>(step.island)];
      for (int t : island.inputs) read(s, device ? Location{Where::kDeviceInput, t, step.island} : Location{Where::kHostSlot, t, -1});
      for (int t : island.outputs)
        writes.push_back(device ? Location{Where::kDeviceOutput, t, step.island} : Location{Where::kHostSlot, t, -1});
    } else {
      switch (step.handoff) {
        case HandoffKind::kUpload:
          read(s, {Where::kHostSlot, step.tensor, -1});
          writes.push_back({Where::kDeviceInput, step.tensor, step.island});
          break;
        case HandoffKind::kReadback:
          read(s, {Where::kDeviceOutput, step.tensor, step.island});
          writes.push_back({Where::kHostSlot, step.tensor, -1});
          break;
        case HandoffKind::kDeviceCopy:
        case HandoffKind::kAlias:
          read(s, {Where::kDeviceOutput, step.tensor, producer[static_cast<size_t>(step.tensor)]});
          writes.push_back({Where::kDeviceInput, step.tensor, step.island});
          break;
        case HandoffKind::kHostCopy:
          break;
      }
    }
    for (const Location& loc : writes) writer[loc] = static_cast<int>(s);
    auto& d = g.deps[s];
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    for (int dep : d) g.users[static_cast<size_t>(dep)].push_back(static_cast<int>(s));
  }
  // Transitive closure in step order (deps always point backwards).
  const size_t words = (n + 63) / 64;
  g.reach_.assign(n, std::vector<uint64_t>(words, 0));
  for (size_t s = 0; s < n; ++s)
    for (int dep : g.deps[s]) {
      g.reach_[s][static_cast<size_t>(dep) / 64] |= 1ull << (dep % 64);
      for (size_t w = 0; w < words; ++w) g.reach_[s][w] |= g.reach_[static_cast<size_t>(dep)][w];
    }
  return g;
}

}  // namespace hetsched
