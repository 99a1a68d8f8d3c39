// hetsched's pthreadpool (delegates/cpu/xnnpack/threadpool.h): every
// variant visits each item of its grid exactly once with the tile sizes the
// serial loop in pthreadpool.h's comments gives, jobs back to back and
// from several callers complete, denormals are off inside jobs that ask for
// it, and XNNPACK's own calls land on this pool.
#include "delegates/cpu/xnnpack/threadpool.h"

#include <gtest/gtest.h>
#include <xmmintrin.h>
#include <xnnpack.h>

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "delegates/cpu/xnnpack/xnnpack_library.h"

namespace hetsched::cpu::xnnpack {
namespace {

using Visit = std::array<size_t, 12>;  // one task call's arguments after the context

// Collects every call's arguments (any thread).
struct Visits {
  std::mutex mutex;
  std::map<Visit, int> calls;
  void add(const Visit& v) {
    const std::lock_guard<std::mutex> lock(mutex);
    ++calls[v];
  }
};

// The calls a serial tiled loop makes over `range` with `tile` per
// dimension (1 = untiled; those report no size), as pthreadpool.h writes it.
std::map<Visit, int> serial_calls(const std::vector<size_t>& range, const std::vector<size_t>& tile) {
  std::map<Visit, int> calls;
  const size_t n = range.size();
  std::vector<size_t> start(n, 0);
  for (size_t d = 0; d < n; ++d)
    if (range[d] == 0) return calls;
  for (;;) {
    Visit v{};
    size_t k = 0;
    for (size_t d = 0; d < n; ++d) v[k++] = start[d];
    for (size_t d = 0; d < n; ++d)
      if (tile[d] != 1) v[k++] = std::min(tile[d], range[d] - start[d]);
    ++calls[v];
    size_t d = n;
    while (d-- > 0) {
      start[d] += tile[d];
      if (start[d] < range[d]) break;
      start[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return calls;
  }
}

struct PoolDeleter {
  void operator()(pthreadpool_t pool) const { pthreadpool_destroy(pool); }
};
using Pool = std::unique_ptr<pthreadpool, PoolDeleter>;

class ThreadpoolTest : public ::testing::TestWithParam<size_t> {
 protected:
  // A pool of GetParam() threads; 0 stands for no pool (the calling thread).
  void SetUp() override {
    if (GetParam() > 0) pool_.reset(pthreadpool_create(GetParam()));
  }
  pthreadpool_t pool() { return pool_.get(); }
  Pool pool_;
};

TEST_P(ThreadpoolTest, EveryVariantVisitsEachTileOnce) {
  Visits v;
  auto* ctx = &v;
  const auto check = [&](const std::vector<size_t>& range, const std::vector<size_t>& tile, const char* name) {
    EXPECT_EQ(v.calls, serial_calls(range, tile)) << name;
    v.calls.clear();
  };
  pthreadpool_parallelize_1d(
      pool(), [](void* c, size_t i) { static_cast<Visits*>(c)->add({i}); }, ctx, 37, 0);
  check({37}, {1}, "1d");
  pthreadpool_parallelize_1d_tile_1d(
      pool(), [](void* c, size_t i, size_t n) { static_cast<Visits*>(c)->add({i, n}); }, ctx, 37, 5, 0);
  check({37}, {5}, "1d_tile_1d");
  pthreadpool_parallelize_2d(
      pool(), [](void* c, size_t i, size_t j) { static_cast<Visits*>(c)->add({i, j}); }, ctx, 7, 9, 0);
  check({7, 9}, {1, 1}, "2d");
  pthreadpool_parallelize_2d_tile_1d(
      pool(), [](void* c, size_t i, size_t j, size_t nj) { static_cast<Visits*>(c)->add({i, j, nj}); }, ctx, 7, 9,
      4, 0);
  check({7, 9}, {1, 4}, "2d_tile_1d");
  pthreadpool_parallelize_2d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t ni, size_t nj) { static_cast<Visits*>(c)->add({i, j, ni, nj}); }, ctx,
      13, 11, 3, 4, 0);
  check({13, 11}, {3, 4}, "2d_tile_2d");
  pthreadpool_parallelize_3d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t nj, size_t nk) {
        static_cast<Visits*>(c)->add({i, j, k, nj, nk});
      },
      ctx, 3, 10, 7, 4, 3, 0);
  check({3, 10, 7}, {1, 4, 3}, "3d_tile_2d");
  pthreadpool_parallelize_4d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t nk, size_t nl) {
        static_cast<Visits*>(c)->add({i, j, k, l, nk, nl});
      },
      ctx, 2, 3, 5, 9, 2, 4, 0);
  check({2, 3, 5, 9}, {1, 1, 2, 4}, "4d_tile_2d");
  pthreadpool_parallelize_5d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t nl, size_t nm) {
        static_cast<Visits*>(c)->add({i, j, k, l, m, nl, nm});
      },
      ctx, 2, 1, 3, 5, 7, 2, 3, 0);
  check({2, 1, 3, 5, 7}, {1, 1, 1, 2, 3}, "5d_tile_2d");
  pthreadpool_parallelize_6d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t nm, size_t nn) {
        static_cast<Visits*>(c)->add({i, j, k, l, m, n, nm, nn});
      },
      ctx, 2, 2, 1, 3, 5, 6, 2, 4, 0);
  check({2, 2, 1, 3, 5, 6}, {1, 1, 1, 1, 2, 4}, "6d_tile_2d");
  pthreadpool_parallelize_6d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n) {
        static_cast<Visits*>(c)->add({i, j, k, l, m, n});
      },
      ctx, 2, 3, 1, 2, 3, 2, 0);
  check({2, 3, 1, 2, 3, 2}, {1, 1, 1, 1, 1, 1}, "6d");
  pthreadpool_parallelize_1d(
      pool(), [](void* c, size_t i) { static_cast<Visits*>(c)->add({i}); }, ctx, 0, 0);
  check({0}, {1}, "empty 1d");
}

// Grids of thousands of tiles: threads take runs of items from their own
// share that cross rows, so the stepped coordinates wrap mid-run.
TEST_P(ThreadpoolTest, LargeGridsTakenInRunsVisitEachTileOnce) {
  Visits v;
  pthreadpool_parallelize_2d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t ni, size_t nj) { static_cast<Visits*>(c)->add({i, j, ni, nj}); }, &v,
      301, 70, 2, 3, 0);
  EXPECT_EQ(v.calls, serial_calls({301, 70}, {2, 3}));
  v.calls.clear();
  pthreadpool_parallelize_5d_tile_2d(
      pool(),
      [](void* c, size_t i, size_t j, size_t k, size_t l, size_t m, size_t nl, size_t nm) {
        static_cast<Visits*>(c)->add({i, j, k, l, m, nl, nm});
      },
      &v, 3, 5, 7, 11, 13, 4, 5, 0);
  EXPECT_EQ(v.calls, serial_calls({3, 5, 7, 11, 13}, {1, 1, 1, 4, 5}));
}

TEST_P(ThreadpoolTest, ThousandsOfSmallJobsBackToBackAllComplete) {
  std::vector<std::atomic<int>> hits(64);
  for (int job = 0; job < 20000; ++job) {
    const size_t items = 1 + job % 64;
    pthreadpool_parallelize_1d(
        pool(), [](void* c, size_t i) { static_cast<std::atomic<int>*>(c)[i].fetch_add(1); }, hits.data(), items, 0);
  }
  // Item i runs in every job with more than i items.
  for (size_t i = 0; i < hits.size(); ++i) {
    int expected = 0;
    for (int job = 0; job < 20000; ++job) expected += static_cast<size_t>(job % 64) >= i;
    EXPECT_EQ(hits[i].load(), expected) << "item " << i;
  }
}

TEST_P(ThreadpoolTest, CallersOnSeveralThreadsAreSerialisedAndComplete) {
  constexpr int kCallers = 3, kJobs = 2000, kItems = 17;
  std::vector<std::atomic<long>> sums(kCallers);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int j = 0; j < kJobs; ++j)
        pthreadpool_parallelize_1d(
            pool(), [](void* s, size_t i) { static_cast<std::atomic<long>*>(s)->fetch_add(static_cast<long>(i)); },
            &sums[c], kItems, 0);
    });
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(sums[c].load(), long{kJobs} * (kItems * (kItems - 1) / 2)) << c;
}

TEST_P(ThreadpoolTest, DenormalsAreOffInsideAJobThatAsksAndRestoredAfter) {
  const unsigned before = _mm_getcsr();
  std::atomic<int> flushed{0}, kept{0};
  struct Counts {
    std::atomic<int>* flushed;
    std::atomic<int>* kept;
  } counts{&flushed, &kept};
  auto probe = [](void* c, size_t) {
    auto* n = static_cast<Counts*>(c);
    ((_mm_getcsr() & 0x8040u) == 0x8040u ? n->flushed : n->kept)->fetch_add(1);
  };
  pthreadpool_parallelize_1d(pool(), probe, &counts, 64, PTHREADPOOL_FLAG_DISABLE_DENORMALS);
  EXPECT_EQ(flushed.load(), 64);
  EXPECT_EQ(_mm_getcsr(), before);
  flushed = 0;
  kept = 0;
  pthreadpool_parallelize_1d(pool(), probe, &counts, 64, 0);
  EXPECT_EQ(kept.load(), 64);
}

TEST_P(ThreadpoolTest, ReportsItsThreadCount) {
  EXPECT_EQ(pthreadpool_get_threads_count(pool()), GetParam() == 0 ? 1u : GetParam());
}

INSTANTIATE_TEST_SUITE_P(Threads, ThreadpoolTest, ::testing::Values(0, 1, 2, 3, 5),
                         [](const auto& info) { return "threads" + std::to_string(info.param); });

TEST(ThreadpoolXnnpackTest, XnnpackOperatorsRunOnThisPool) {
  ASSERT_TRUE(ensure_initialized().is_ok());
  Pool pool(pthreadpool_create(2));
  ASSERT_NE(pool, nullptr);
  constexpr size_t kBatch = 4096, kChannels = 64;
  std::vector<float> x(kBatch * kChannels + 16), y(kBatch * kChannels);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 13) - 6.0f;
  xnn_operator_t op = nullptr;
  ASSERT_EQ(xnn_create_clamp_nc_f32(kChannels, kChannels, kChannels, -1.0f, 2.0f, 0, &op), xnn_status_success);
  ASSERT_EQ(xnn_setup_clamp_nc_f32(op, kBatch, x.data(), y.data(), pool.get()), xnn_status_success);
  const uint64_t jobs_before = pool_jobs(pool.get());
  ASSERT_EQ(xnn_run_operator(op, pool.get()), xnn_status_success);
  xnn_delete_operator(op);
  // XNNPACK's call reached this pool (it would not count on libpthreadpool's).
  EXPECT_GT(pool_jobs(pool.get()), jobs_before);
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], std::min(2.0f, std::max(-1.0f, x[i]))) << i;
}

}  // namespace
}  // namespace hetsched::cpu::xnnpack
