#include "delegates/cpu/thread_pool.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <algorithm>
#include <climits>
#include <new>
#include <system_error>

namespace hetsched::cpu {

namespace {

// Items a thread takes from its own share at a time: a sixteenth of the
// share, so that the last take leaves little for a thief to wait on; other
// shares are taken from one item at a time. (Single items with a division
// per dimension per item cost MobileNetV3-Small ~15% at 2 threads.)
constexpr size_t kTakesPerShare = 16;
// Pauses the caller spins while a joined worker finishes its last item,
// before it yields its core (the worker may be waiting for one).
constexpr int kCallerSpins = 4096;

thread_local ThreadPool* t_current_pool = nullptr;

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// kDisableDenormals: flush-to-zero and denormals-are-zero (MXCSR bits 15
// and 6) while the thread works on the job, as pthreadpool does.
class DenormalsOff {
 public:
  explicit DenormalsOff(uint32_t flags) : active_((flags & kDisableDenormals) != 0) {
    if (active_) {
      saved_ = _mm_getcsr();
      _mm_setcsr(saved_ | 0x8040u);
    }
  }
  ~DenormalsOff() {
    if (active_) _mm_setcsr(saved_);
  }
  DenormalsOff(const DenormalsOff&) = delete;
  DenormalsOff& operator=(const DenormalsOff&) = delete;

 private:
  bool active_;
  unsigned saved_ = 0;
};

size_t thread_count(int threads) {
  if (threads > 0) return static_cast<size_t>(threads);
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

// One thread's contiguous share of a job's items; its own cache line, so a
// thread taking from its own share does not contend with the others.
struct alignas(64) ThreadPool::Share {
  std::atomic<size_t> next{0};
  size_t end = 0;
};

ThreadPool::ThreadPool(int threads, std::chrono::microseconds worker_spin)
    : threads_(thread_count(threads)),
      worker_spin_(worker_spin),
      shares_(new Share[threads_]),
      tids_(new std::atomic<pid_t>[threads_]) {
  for (size_t t = 0; t < threads_; ++t) tids_[t].store(0, std::memory_order_relaxed);
  try {
    for (size_t t = 1; t < threads_; ++t) workers_.emplace_back([this, t] { worker_main(t); });
  } catch (const std::system_error&) {
    stop();
    throw;
  }
}

std::unique_ptr<ThreadPool> ThreadPool::create(int threads, std::chrono::microseconds worker_spin) {
  try {
    return std::make_unique<ThreadPool>(threads, worker_spin);
  } catch (const std::system_error&) {
    return nullptr;
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::stop() {
  stopping_.store(true, std::memory_order_seq_cst);
  state_.fetch_add(2, std::memory_order_seq_cst);  // a change every worker wakes for; stays closed
  futex_wake_all(&state_);
  for (std::thread& w : workers_) w.join();
  workers_.clear();
}

void ThreadPool::run_ranges(RangeFn range_fn, const void* loop, size_t items, uint32_t flags, JobSource source) {
  if (items == 0) return;
  if (threads_ <= 1 || items == 1 || busy_.exchange(true, std::memory_order_acquire)) {
    run_serially(range_fn, loop, items, flags);
    return;
  }
  range_ = range_fn;
  loop_ = loop;
  flags_ = flags;
  source_ = source;
  items_ = items;
  own_take_ = std::max<size_t>(1, items / threads_ / kTakesPerShare);
  for (size_t t = 0; t < threads_; ++t) {
    // Fewer items than threads (a squeeze-excite block's 1x1 conv on 16
    // threads): one each for threads 0 .. items - 1, so the others need
    // not take part at all.
    const size_t begin = items < threads_ ? std::min(t, items) : t * items / threads_;
    shares_[t].next.store(begin, std::memory_order_relaxed);
    shares_[t].end = items < threads_ ? std::min(t + 1, items) : (t + 1) * items / threads_;
  }
  const uint32_t closed = state_.load(std::memory_order_relaxed);
  state_.store(closed + 1, std::memory_order_seq_cst);  // open: the job's fields are published
  if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake_all(&state_);
  size_t ran = 0;
  work(0, &ran);
  // No item is left to take: close the job, so a worker that wakes from
  // now on stays out, and wait for those inside to leave.
  state_.store(closed + 2, std::memory_order_seq_cst);
  for (int spins = 0; joined_.load(std::memory_order_acquire) != 0; ++spins) {
    if (spins < kCallerSpins)
      _mm_pause();
    else
      sched_yield();
  }
  jobs_[static_cast<int>(source)].fetch_add(1, std::memory_order_relaxed);
  busy_.store(false, std::memory_order_release);
}

void ThreadPool::run(size_t tasks, Fn fn, void* context) {
  struct Tasks {
    Fn fn;
    void* context;
  } loop{fn, context};
  run_ranges(
      [](const void* l, size_t begin, size_t end) {
        const Tasks& t = *static_cast<const Tasks*>(l);
        for (size_t i = begin; i < end; ++i) t.fn(t.context, i);
      },
      &loop, tasks, 0, JobSource::kFast);
}

// Takes items from thread `self`'s share, then from the others'; counts
// the ranges it ran in *ran.
void ThreadPool::work(size_t self, size_t* ran) {
  const DenormalsOff denormals(flags_);
  const RangeFn fn = range_;
  const void* const arg = loop_;
  for (size_t k = 0; k < threads_; ++k) {
    Share& share = shares_[(self + k) % threads_];
    const size_t take = k == 0 ? own_take_ : 1;
    const size_t end = share.end;
    // A look before the read-modify-write: on many threads, taking from
    // shares already emptied would bounce their cache lines for nothing.
    if (share.next.load(std::memory_order_relaxed) >= end) continue;
    for (size_t i; (i = share.next.fetch_add(take, std::memory_order_relaxed)) < end; ++*ran)
      fn(arg, i, std::min(i + take, end));
  }
}

void ThreadPool::worker_main(size_t self) {
  tids_[self].store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_relaxed);
  uint32_t seen = 0;
  for (;;) {
    const uint32_t now = wait_for_change(seen);
    seen = now;
    if (stopping_.load(std::memory_order_acquire)) return;
    if ((now & 1u) == 0) continue;  // a closed job: it finished without us
    joined_.fetch_add(1, std::memory_order_seq_cst);
    // Joined before the caller closed this job, or leave without reading
    // its fields (the caller may be writing the next job's).
    // A worker with no item of its own in a job of fewer items than threads
    // stays out: the caller takes what a late worker leaves.
    if (state_.load(std::memory_order_seq_cst) == now && self < items_) {
      size_t ran = 0;
      work(self, &ran);
      if (ran > 0) worker_jobs_[static_cast<int>(source_)].fetch_add(1, std::memory_order_relaxed);
    }
    joined_.fetch_sub(1, std::memory_order_release);
  }
}

// The state once it differs from `seen`: spins for worker_spin_, then
// sleeps on the futex.
uint32_t ThreadPool::wait_for_change(uint32_t seen) {
  const auto deadline = std::chrono::steady_clock::now() + worker_spin_;
  for (int spins = 0;; ++spins) {
    const uint32_t now = state_.load(std::memory_order_acquire);
    if (now != seen) return now;
    _mm_pause();
    if ((spins & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
  }
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  uint32_t now;
  while ((now = state_.load(std::memory_order_seq_cst)) == seen) futex_wait(&state_, seen);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return now;
}

ThreadPool::Stats ThreadPool::stats() const {
  Stats s;
  for (int i = 0; i < kJobSources; ++i) {
    s.jobs[i] = jobs_[i].load(std::memory_order_relaxed);
    s.worker_jobs[i] = worker_jobs_[i].load(std::memory_order_relaxed);
  }
  return s;
}

std::vector<pid_t> ThreadPool::worker_tids() const {
  // A worker publishes its id when it first runs, which on a loaded
  // machine can be well after the constructor returned (and after jobs
  // the other workers served): wait for each, so every worker is listed.
  std::vector<pid_t> tids;
  for (size_t t = 1; t < threads_; ++t) {
    pid_t tid;
    while ((tid = tids_[t].load(std::memory_order_relaxed)) == 0) sched_yield();
    tids.push_back(tid);
  }
  return tids;
}

void run_serially(ThreadPool::RangeFn range_fn, const void* loop, size_t items, uint32_t flags) {
  if (items == 0) return;
  const DenormalsOff denormals(flags);
  range_fn(loop, 0, items);
}

ThreadPool* current_pool() { return t_current_pool; }

ScopedCurrentPool::ScopedCurrentPool(ThreadPool* pool) : previous_(t_current_pool) { t_current_pool = pool; }

ScopedCurrentPool::~ScopedCurrentPool() { t_current_pool = previous_; }

}  // namespace hetsched::cpu
