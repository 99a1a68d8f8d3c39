// The fast kernels' thread pool (delegates/cpu/fast/task_pool.h): every
// task runs exactly once, whoever runs it, with callers on several threads
// at once, and when the workers are asleep or busy elsewhere.
#include "delegates/cpu/fast/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

namespace hetsched::cpu::fast {
namespace {

// Counts each task's runs and which threads ran any.
struct Counts {
  std::vector<std::atomic<int>> runs;
  std::atomic<int> on_other_threads{0};
  std::thread::id caller = std::this_thread::get_id();

  explicit Counts(size_t tasks) : runs(tasks) {}

  static void task(void* context, size_t i) {
    auto& c = *static_cast<Counts*>(context);
    c.runs[i].fetch_add(1);
    if (std::this_thread::get_id() != c.caller) c.on_other_threads.fetch_add(1);
    // Long enough that the workers wake and take some.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    while (std::chrono::steady_clock::now() < until) {
    }
  }

  void expect_each_once() const {
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i;
  }
};

TEST(TaskPoolTest, RunsEveryTaskOnceAndTheWorkersTakePart) {
  TaskPool pool(3);
  EXPECT_EQ(pool.threads(), 3);
  int shared_jobs = 0;
  for (size_t tasks : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{300}}) {
    for (int repeat = 0; repeat < 20; ++repeat) {
      Counts c(tasks);
      pool.run(tasks, &Counts::task, &c);
      c.expect_each_once();
      shared_jobs += c.on_other_threads.load() > 0;
    }
  }
  // 300 tasks of 20 us: the workers (spinning or woken) join most jobs.
  EXPECT_GT(shared_jobs, 0);
}

TEST(TaskPoolTest, AfterTheWorkersSleep) {
  TaskPool pool(2);
  for (int repeat = 0; repeat < 3; ++repeat) {
    // Past the workers' spin: they are on the futex when the job comes.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    Counts c(200);
    pool.run(200, &Counts::task, &c);
    c.expect_each_once();
  }
}

TEST(TaskPoolTest, OneThreadRunsOnTheCaller) {
  TaskPool pool(1);
  EXPECT_EQ(pool.threads(), 1);
  Counts c(50);
  pool.run(50, &Counts::task, &c);
  c.expect_each_once();
  EXPECT_EQ(c.on_other_threads.load(), 0);
}

// Several callers at once (islands of one delegate on different lanes): one
// gets the workers, the others run alone; each finishes all its tasks.
TEST(TaskPoolTest, ConcurrentCallers) {
  TaskPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int repeat = 0; repeat < 30; ++repeat) {
        std::vector<std::atomic<int>> runs(64);
        pool.run(
            runs.size(), [](void* context, size_t i) { (*static_cast<std::vector<std::atomic<int>>*>(context))[i]++; },
            &runs);
        for (auto& r : runs) failures += r.load() != 1;
      }
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(TaskPoolTest, ParallelCopyCopiesEveryByte) {
  TaskPool pool(2);
  for (size_t bytes : {size_t{0}, size_t{5}, size_t{512 * 1024}, size_t{3 * 256 * 1024 + 13}}) {
    std::vector<unsigned char> src(bytes), dst(bytes, 0);
    std::iota(src.begin(), src.end(), static_cast<unsigned char>(1));
    parallel_copy(src.data(), dst.data(), bytes, &pool);
    EXPECT_EQ(src, dst) << bytes << " bytes";
    std::fill(dst.begin(), dst.end(), 0);
    parallel_copy(src.data(), dst.data(), bytes, nullptr);
    EXPECT_EQ(src, dst) << bytes << " bytes, no pool";
  }
}

}  // namespace
}  // namespace hetsched::cpu::fast
