// The CPU delegate's thread pool through its two doors: the pthreadpool API
// (what XNNPACK calls, pthreadpool_parallelize_1d) and the fast kernels'
// TaskPool::run. Each case is a run of jobs back to back of `tasks` tasks
// that each spin `task_us` microseconds; the figure is the mean time per
// job, so the pool's dispatch and join cost is what differs from the ideal
// tasks * task_us / threads. Columns: each door alone on one pool; the
// two doors alternated on that one pool (a fast kernel right after an
// XNNPACK segment, as the CPU delegate runs them now); and alternated on two
// pools of `threads` each (as it ran them before they were one: each pool's
// workers spin while the other's run).
//
//   build/bench/thread_pool_bench [--threads 2] [--jobs 20000] [--rounds 3]
#include <pthreadpool.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "delegates/cpu/fast/task_pool.h"
#include "delegates/cpu/xnnpack/threadpool.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Work {
  double task_us;
};

void spin_task(void* context, size_t) {
  const auto until = Clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(static_cast<Work*>(context)->task_us * 1000));
  while (Clock::now() < until) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, jobs = 20000, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--jobs"))
      jobs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "thread_pool_bench: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  auto made = hetsched::cpu::xnnpack::make_threadpool(threads);
  if (!made.is_ok()) {
    std::fprintf(stderr, "thread_pool_bench: %s\n", made.status().message().c_str());
    return 1;
  }
  hetsched::cpu::xnnpack::Threadpool pthread_pool = std::move(made).value();
  hetsched::cpu::fast::TaskPool& one_pool = *hetsched::cpu::xnnpack::thread_pool_of(pthread_pool.get());
  hetsched::cpu::fast::TaskPool other_pool(threads);

  struct Case {
    const char* name;
    size_t tasks;
    double task_us;
  };
  const Case cases[] = {{"tiny 2x0.5us", 2, 0.5}, {"small 8x2us", 8, 2}, {"medium 32x5us", 32, 5}, {"large 256x20us", 256, 20}};
  std::printf("threads %d, %d jobs a case, best of %d rounds (us per job)\n", threads, jobs, rounds);
  std::printf("%-16s %12s %12s %14s %14s\n", "case", "pthreadpool", "TaskPool", "alternated", "two pools");
  for (const Case& c : cases) {
    Work work{c.task_us};
    const int n = c.tasks >= 256 ? std::max(1, jobs / 50) : jobs;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int r = 0; r < rounds; ++r) {
      for (int column = 0; column < 4; ++column) {
        const auto t0 = Clock::now();
        for (int j = 0; j < n; ++j) {
          const bool api = column == 0 || (column >= 2 && j % 2 == 0);
          if (api)
            pthreadpool_parallelize_1d(pthread_pool.get(), spin_task, &work, c.tasks, 0);
          else
            (column == 3 ? other_pool : one_pool).run(c.tasks, spin_task, &work);
        }
        const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
        best[column] = std::min(best[column], us);
      }
    }
    std::printf("%-16s %12.2f %12.2f %14.2f %14.2f\n", c.name, best[0], best[1], best[2], best[3]);
  }
  return 0;
}
