#include "delegates/cpu/fast/task_pool.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HETSCHED_CPU_RELAX() _mm_pause()
#else
#define HETSCHED_CPU_RELAX() ((void)0)
#endif

namespace hetsched::cpu::fast {

namespace {

// How long a worker spins for the next job before it sleeps. The split ops
// of a transformer block come microseconds apart, but runs come further
// apart, and a worker woken from its futex seems to land on the caller's
// own core (the kernel places a wakee near its waker) and run only when
// the caller stops: with 50 or 300 us, the encoder and BERT blocks at 2 threads
// on the development machine ran no faster than at 1 (0.142 against 0.09
// ms with pthreadpool, whose workers spin for ~1M pauses); from 1 ms they
// matched it.
constexpr auto kWorkerSpin = std::chrono::milliseconds(2);
// How long the caller spins for joined workers before it yields its core
// (a joined worker that the scheduler took off its core needs one back).
constexpr int kCallerSpins = 2000;
// parallel_copy's piece of work per task.
constexpr size_t kChunk = 256 * 1024;

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

TaskPool::TaskPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::thread::hardware_concurrency());
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

TaskPool::~TaskPool() {
  stop_.store(true, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&generation_);
  for (std::thread& t : workers_) t.join();
}

void TaskPool::run(size_t tasks, Fn fn, void* context) {
  // Busy with another caller's job: this one runs alone rather than wait.
  if (workers_.empty() || tasks < 2 || !caller_.try_lock()) {
    for (size_t i = 0; i < tasks; ++i) fn(context, i);
    return;
  }
  tasks_ = tasks;
  fn_ = fn;
  context_ = context;
  next_.store(0, std::memory_order_relaxed);
  const uint64_t generation = (state_.load(std::memory_order_relaxed) >> 32) + 1;
  state_.store(generation << 32, std::memory_order_release);  // open, nobody joined
  // seq_cst against the workers' sleepers_ then generation_: either this
  // sees a sleeper, or the sleeper sees the new generation.
  generation_.store(static_cast<uint32_t>(generation), std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake_all(&generation_);

  run_tasks();

  state_.fetch_or(kClosed, std::memory_order_acq_rel);
  for (int spins = 0; (state_.load(std::memory_order_acquire) & kJoinedMask) != 0; ++spins) {
    if (spins < kCallerSpins)
      HETSCHED_CPU_RELAX();
    else
      sched_yield();
  }
  caller_.unlock();
}

void TaskPool::run_tasks() {
  for (size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < tasks_;
       i = next_.fetch_add(1, std::memory_order_relaxed))
    fn_(context_, i);
}

bool TaskPool::try_join(uint64_t state) {
  do {
    if (state & kClosed) return false;
  } while (!state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire));
  run_tasks();
  state_.fetch_sub(1, std::memory_order_release);
  return true;
}

void TaskPool::worker_loop() {
  uint32_t seen = 0;
  while (!stop_.load(std::memory_order_acquire)) {
    uint32_t generation = generation_.load(std::memory_order_acquire);
    const auto spin_until = std::chrono::steady_clock::now() + kWorkerSpin;
    for (int spins = 1; generation == seen; ++spins) {
      HETSCHED_CPU_RELAX();
      generation = generation_.load(std::memory_order_acquire);
      if (spins % 64 == 0 && std::chrono::steady_clock::now() > spin_until) break;
    }
    if (generation == seen) {
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (generation_.load(std::memory_order_seq_cst) == seen && !stop_.load(std::memory_order_seq_cst))
        futex_wait(&generation_, seen);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      continue;
    }
    seen = generation;
    try_join(state_.load(std::memory_order_acquire));
  }
}

void parallel_copy(const void* src, void* dst, size_t bytes, TaskPool* pool) {
  // An empty tensor has no buffer, and memcpy to null is undefined even for
  // 0 bytes (UBSan in scripts/asan.sh: the conformance tests' empty tensors).
  if (bytes == 0) return;
  if (!pool || bytes < 2 * kChunk) {
    std::memcpy(dst, src, bytes);
    return;
  }
  struct Copy {
    const std::byte* src;
    std::byte* dst;
    size_t bytes;
  } c{static_cast<const std::byte*>(src), static_cast<std::byte*>(dst), bytes};
  pool->run((bytes + kChunk - 1) / kChunk,
            [](void* context, size_t i) {
              const Copy& c = *static_cast<const Copy*>(context);
              std::memcpy(c.dst + i * kChunk, c.src + i * kChunk, std::min(kChunk, c.bytes - i * kChunk));
            },
            &c);
}

}  // namespace hetsched::cpu::fast
