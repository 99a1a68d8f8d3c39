// How long memory/'s arena planner takes on large plans, and how close it
// comes to the lower bound: the two families of
// test/memory_planner_test.cc (which checks the plans, not the time) at
// 1,000 to 20,000 buffers. A program's memory plan is made at compile time,
// so seconds would be acceptable; the point is to see growth that is worse
// than the lifetime index promises (about n log n on CNN-like lifetimes).
//
//   memory_planner_bench [--benchmark_filter=...]   (Google Benchmark flags)
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "memory/arena_planner.h"

namespace {

using hetsched::memory::BufferRequest;

BufferRequest buffer(int i, uint64_t bytes, int first, int last, uint64_t alignment) {
  BufferRequest r;
  r.name = "t" + std::to_string(i);
  r.bytes = bytes;
  r.alignment = alignment;
  r.first = first;
  r.last = last;
  return r;
}

// A CNN's intermediates: each lives 1 to 3 steps, every tenth (a skip
// connection) up to 40; sizes 1 KiB to 4 MiB.
std::vector<BufferRequest> cnn_like(int count) {
  std::mt19937 rng(42);
  std::vector<BufferRequest> buffers;
  for (int i = 0; i < count; ++i) {
    const int span = (i % 10 == 9) ? static_cast<int>(rng() % 40) : static_cast<int>(1 + rng() % 3);
    buffers.push_back(buffer(i, (uint64_t{1024} << (rng() % 13)) + 4 * (rng() % 256), i, i + span, 64));
  }
  return buffers;
}

// The dense case: lifetimes of up to 2,000 of count/2 steps, so each buffer
// conflicts with thousands of others.
std::vector<BufferRequest> long_lived(int count) {
  std::mt19937 rng(43);
  std::vector<BufferRequest> buffers;
  for (int i = 0; i < count; ++i) {
    const int first = static_cast<int>(rng() % static_cast<unsigned>(count / 2));
    buffers.push_back(buffer(i, 256 + rng() % 65536, first, first + static_cast<int>(rng() % 2000), 256));
  }
  return buffers;
}

template <std::vector<BufferRequest> (*Make)(int)>
void BM_PlanArena(benchmark::State& state) {
  const std::vector<BufferRequest> requests = Make(static_cast<int>(state.range(0)));
  double ratio = 0;
  for (auto _ : state) {
    auto plan = hetsched::memory::plan_arena(requests);
    if (!plan.is_ok()) {
      state.SkipWithError(plan.status().message().c_str());
      return;
    }
    ratio = double(plan->planned_bytes) / double(plan->lower_bound);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["planned/lower_bound"] = ratio;
  state.SetComplexityN(state.range(0));
}

BENCHMARK(BM_PlanArena<cnn_like>)->Name("plan_arena/cnn_like")->RangeMultiplier(2)->Range(1000, 16000)
    ->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_PlanArena<long_lived>)->Name("plan_arena/long_lived")->RangeMultiplier(2)->Range(1000, 16000)
    ->Unit(benchmark::kMillisecond)->Complexity();

}  // namespace

BENCHMARK_MAIN();
