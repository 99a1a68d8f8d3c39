// The thread pool the fast kernels split their work over: the caller takes
// part, and never waits for a worker that has not started.
//
// pthreadpool (XNNPACK's) hands each worker its share and then waits for
// every worker to report back, spinning on the caller's core. On a machine
// where other processes hold the cores, a worker that is not running when a
// job starts holds the caller until the scheduler gets to it: the BERT
// encoder at 2 threads on the shared 2-core machine ran 1.8 ms in one round
// and 242 ms in the next, against ORT's steady 15 ms. Here the tasks are
// claimed one at a time from a shared counter; workers join a job only
// while it is open, the caller closes it when no task is left, and waits
// only for the workers that joined (each is running a task).
//
// Workers spin for 2 ms after a job (a transformer block's next split op
// comes microseconds later, and a woken worker is slow to get a core of its
// own), then sleep on a futex.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace hetsched::cpu::fast {

class TaskPool {
 public:
  using Fn = void (*)(void* context, size_t task);

  // `threads` counts the caller: threads - 1 workers (none for 1); 0 or
  // less means one per core.
  explicit TaskPool(int threads);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // The caller and the workers.
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(context, i) once for every i in [0, tasks) and returns when all
  // have run. Callers on several threads at once are fine: while the pool
  // is busy with one, the others run their tasks on their own thread.
  void run(size_t tasks, Fn fn, void* context);

 private:
  void worker_loop();
  // Joins the open job, if any, and runs its tasks; false when none is open.
  bool try_join(uint64_t state);
  void run_tasks();

  // state_: the job's generation (high 32 bits), whether it is closed (bit
  // 31) and how many workers are in it (low bits). A worker joins by
  // raising the count while the job is open; the caller closes it and
  // waits for the count to fall to 0.
  static constexpr uint64_t kClosed = uint64_t{1} << 31;
  static constexpr uint64_t kJoinedMask = kClosed - 1;
  alignas(64) std::atomic<uint64_t> state_{kClosed};
  // The generation again, as the 32-bit word workers sleep on (futex).
  alignas(64) std::atomic<uint32_t> generation_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};

  // The job: written by the caller before it opens the job.
  alignas(64) std::atomic<size_t> next_{0};
  size_t tasks_ = 0;
  Fn fn_ = nullptr;
  void* context_ = nullptr;

  std::mutex caller_;  // one job at a time
  std::vector<std::thread> workers_;
};

using SharedTaskPool = std::shared_ptr<TaskPool>;

// memcpy of `bytes` in chunks over `pool` (nullptr: this thread), for an
// island's edges: one core streams a few GB/s, and a 6 MiB edge cost ~1 ms
// on one thread of the H100 machine's Xeon.
void parallel_copy(const void* src, void* dst, size_t bytes, TaskPool* pool);

}  // namespace hetsched::cpu::fast
