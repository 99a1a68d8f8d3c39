// The CPU delegate's one thread pool: XNNPACK (through hetsched's
// implementation of the pthreadpool API, xnnpack/threadpool.h), the fast
// kernels (fast/task_pool.h) and the portable kernels (kernels/kernel_util.h's
// parallel_chunks) all split their loops over it, so a delegate with
// `threads: N` starts N - 1 workers and no more (the caller is the Nth).
// Before, XNNPACK and the fast kernels had a pool each and the portable
// kernels TBB's: up to 3(N - 1) workers, and a fast kernel right after an
// XNNPACK segment competed with XNNPACK's still-spinning workers.
//
// A parallel loop is a job that the caller opens, works on and closes:
//   - each thread (the caller is thread 0) first takes runs of items from
//     its own contiguous share, then takes what is left of the others'
//     shares one item at a time; with fewer items than threads, threads
//     0 .. items - 1 get one each and the other workers stay out;
//   - a worker joins a job only while it is open; once no item is left the
//     caller closes the job and waits only for the workers that joined it
//     (each holds an item or is about to find none), never for one that
//     has not woken yet: on a machine whose cores other processes hold,
//     that one may not run for milliseconds (the system libpthreadpool's
//     caller waited for every worker after every operator: EfficientNet-B0
//     at 2 threads on the loaded development machine took 1.1 s against
//     31 ms at 1);
//   - an idle worker spins for kWorkerSpin, then sleeps on a futex.
// Of the two pools this replaces it is the pthreadpool one, which XNNPACK
// needs anyway: its threads take runs of items (a grid's coordinates are
// then stepped, not divided out per item) where the fast kernels' TaskPool
// claimed one task at a time from one shared counter; the two dispatched
// alike in bench/thread_pool_bench.cc (docs/models.md).
//
// One job at a time: a loop started while the pool is busy — by another
// thread, or by a task of the pool's own job (a portable MatMul's batches,
// each a parallel GEMM) — runs on its caller alone rather than wait. A
// session never calls one CPU delegate from two threads at once (its CPU
// islands take the "cpu" resource lock); separate sessions have separate
// delegates, so separate pools.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace hetsched::cpu {

// How long an idle worker spins for the next job before it sleeps on its
// futex. The one knob of the pool's spin-then-sleep policy. Why 2 ms:
// XNNPACK runs a segment's operators back to back and a transformer block's
// fast kernels come microseconds apart, while waking a sleeping worker
// costs a futex call plus the scheduler's latency, and the woken worker
// tends to land on its waker's core and run only once the caller stops.
// With 50 or 300 µs the encoder and BERT blocks at 2 threads on the 2-core
// development machine ran no faster than at 1 thread (from 1 ms they
// matched libpthreadpool, whose workers spin ~1M pauses); with 50 µs 16
// threads on the H100 machine's Xeon were 15-30% slower than libpthreadpool
// (ResNet-50 14.3 against 12.3 ms, MobileNetV3-Small 2.4 against 1.8-2.1);
// with 2 ms within 5-10% of it. Past the last job of a run the workers burn
// at most this long before they sleep.
inline constexpr std::chrono::microseconds kWorkerSpin{2000};

// Who opened a job, for stats(): the pthreadpool API (XNNPACK's runtimes,
// the layout conversions, the NHWC kernels), the fast kernels' TaskPool
// door (run()), an island's edge copies, the portable kernels.
enum class JobSource : int { kPthreadpool, kFast, kCopy, kPortable };
inline constexpr int kJobSources = 4;

// PTHREADPOOL_FLAG_DISABLE_DENORMALS, which XNNPACK sets on every operator:
// flush-to-zero and denormals-are-zero while a thread works on the job.
inline constexpr uint32_t kDisableDenormals = 0x00000001;

class ThreadPool {
 public:
  // Runs items [begin, end) of the loop at `loop` (a callable on the
  // caller's stack).
  using RangeFn = void (*)(const void* loop, size_t begin, size_t end);
  // The fast kernels' task: fn(context, i) for one i (TaskPool's shape).
  using Fn = void (*)(void* context, size_t task);

  // `threads` counts the caller: threads - 1 workers (none for 1); 0 or
  // less means one per hardware thread. Throws std::system_error when the
  // system refuses a thread (create() returns nullptr instead).
  explicit ThreadPool(int threads, std::chrono::microseconds worker_spin = kWorkerSpin);
  static std::unique_ptr<ThreadPool> create(int threads, std::chrono::microseconds worker_spin = kWorkerSpin);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The caller and the workers.
  int threads() const { return static_cast<int>(threads_); }

  // Runs range_fn(loop, begin, end) over ranges covering [0, items) and
  // returns when all have run: on the pool, or on this thread alone for a
  // pool of one thread, a single item, or a busy pool (see above).
  void run_ranges(RangeFn range_fn, const void* loop, size_t items, uint32_t flags, JobSource source);

  // The same for a callable loop(begin, end).
  template <typename Loop>
  void parallelize(size_t items, uint32_t flags, JobSource source, const Loop& loop) {
    if (items == 0) return;
    run_ranges([](const void* l, size_t b, size_t e) { (*static_cast<const Loop*>(l))(b, e); }, &loop, items, flags,
               source);
  }

  // The fast kernels' door (fast/task_pool.h, same shape as before the
  // pools were one): fn(context, i) once for every i in [0, tasks).
  void run(size_t tasks, Fn fn, void* context);

  // What the pool has done, for tests and benchmarks.
  struct Stats {
    uint64_t jobs[kJobSources] = {};         // jobs opened on the pool (not run on the caller alone)
    uint64_t worker_jobs[kJobSources] = {};  // of those, jobs a worker ran at least one item of
  };
  Stats stats() const;
  // The workers' kernel thread ids (/proc/self/task entries); waits for
  // any worker that has not started running yet.
  std::vector<pid_t> worker_tids() const;

 private:
  struct alignas(64) Share;
  void stop();
  void work(size_t self, size_t* ran);
  void worker_main(size_t self);
  uint32_t wait_for_change(uint32_t seen);

  const size_t threads_;  // including the caller
  const std::chrono::microseconds worker_spin_;
  std::atomic<bool> busy_{false};  // a job is open (or being opened or closed)
  // The current job, written by the caller while no worker is inside it.
  RangeFn range_ = nullptr;
  const void* loop_ = nullptr;
  uint32_t flags_ = 0;
  JobSource source_ = JobSource::kPthreadpool;
  size_t items_ = 0;     // the job's items
  size_t own_take_ = 1;  // items a thread takes from its own share at a time
  std::unique_ptr<Share[]> shares_;  // one per thread
  // Odd while a job is open, even while none is; every job adds 2. The
  // futex word idle workers sleep on.
  alignas(64) std::atomic<uint32_t> state_{0};
  alignas(64) std::atomic<uint32_t> joined_{0};  // workers inside the open (or just closed) job
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> jobs_[kJobSources] = {};
  std::atomic<uint64_t> worker_jobs_[kJobSources] = {};
  std::unique_ptr<std::atomic<pid_t>[]> tids_;  // by worker (index 0, the caller, unused)
  std::vector<std::thread> workers_;
};

// Runs range_fn(loop, 0, items) on this thread, with `flags` applied (a
// null pool's loops).
void run_serially(ThreadPool::RangeFn range_fn, const void* loop, size_t items, uint32_t flags);

// The pool the portable kernels running on this thread split their loops
// over: set by a CPU island for the length of its run; nullptr (run
// serially) elsewhere, e.g. on the pool's own workers.
ThreadPool* current_pool();

class ScopedCurrentPool {
 public:
  explicit ScopedCurrentPool(ThreadPool* pool);
  ~ScopedCurrentPool();
  ScopedCurrentPool(const ScopedCurrentPool&) = delete;
  ScopedCurrentPool& operator=(const ScopedCurrentPool&) = delete;

 private:
  ThreadPool* previous_;
};

}  // namespace hetsched::cpu
