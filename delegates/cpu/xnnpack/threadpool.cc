#include "delegates/cpu/xnnpack/threadpool.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace {

// Runs items [begin, end) of the loop at `loop` (a callable on the caller's
// stack). Ranges, not single items: a grid's coordinates are then decoded
// once per range and stepped after that (a division per dimension per item
// cost MobileNetV3-Small ~15% at 2 threads).
using RangeFn = void (*)(const void* loop, size_t begin, size_t end);

// One thread's contiguous share of a job's items; its own cache line, so a
// thread taking from its own share does not contend with the others.
struct alignas(64) Share {
  std::atomic<size_t> next{0};
  size_t end = 0;
};

// Items a thread takes from its own share at a time: a sixteenth of the
// share, so that the last take leaves little for a thief to wait on; other
// shares are taken from one item at a time.
constexpr size_t kTakesPerShare = 16;

// How long an idle worker spins for the next job before it sleeps: XNNPACK
// runs its operators back to back (gaps of a few microseconds), and waking
// a sleeping worker takes a futex call and the scheduler's latency, but a
// spinning worker takes a core from whatever else the machine runs. 50 µs
// made 16 threads on the H100 machine's Xeon 15-30% slower than the system
// pthreadpool (ResNet-50 14.3 against 12.3 ms, MobileNetV3-Small 2.4
// against 1.8-2.1); 2 ms (the fast kernels' TaskPool spins as long) is
// within 5-10% of it.
constexpr auto kWorkerSpin = std::chrono::microseconds(2000);
// Pauses the caller spins while a worker finishes its last item, before it
// yields its core (the worker may be waiting for it).
constexpr int kCallerSpins = 4096;

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// PTHREADPOOL_FLAG_DISABLE_DENORMALS: flush-to-zero and denormals-are-zero
// (MXCSR bits 15 and 6) while the thread works on the job, as pthreadpool
// does; XNNPACK sets the flag on every operator.
class DenormalsOff {
 public:
  explicit DenormalsOff(uint32_t flags) : active_((flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) != 0) {
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

}  // namespace

// The pool behind pthreadpool_t (declared, opaque, in pthreadpool.h).
struct pthreadpool {
  explicit pthreadpool(size_t thread_count) : threads(thread_count), shares(new Share[thread_count]) {}

  // Starts the workers (threads - 1 of them; the caller is thread 0).
  // false when the system refuses a thread.
  bool start() {
    try {
      for (size_t t = 1; t < threads; ++t) workers.emplace_back([this, t] { worker_main(t); });
    } catch (const std::system_error&) {
      stop();
      return false;
    }
    return true;
  }

  void stop() {
    stopping.store(true, std::memory_order_seq_cst);
    state.fetch_add(2, std::memory_order_seq_cst);  // a change every worker wakes for; stays closed
    futex_wake_all(&state);
    for (std::thread& w : workers) w.join();
    workers.clear();
  }

  // Runs range(loop, begin, end) over [0, items) on the caller and the
  // workers; returns when all are done. One call at a time.
  void run(RangeFn range_fn, const void* loop_arg, size_t items, uint32_t job_flags) {
    const std::lock_guard<std::mutex> lock(execution_mutex);
    range = range_fn;
    loop = loop_arg;
    flags = job_flags;
    own_take = std::max<size_t>(1, items / threads / kTakesPerShare);
    for (size_t t = 0; t < threads; ++t) {
      shares[t].next.store(t * items / threads, std::memory_order_relaxed);
      shares[t].end = (t + 1) * items / threads;
    }
    const uint32_t closed = state.load(std::memory_order_relaxed);
    state.store(closed + 1, std::memory_order_seq_cst);  // open: the job's fields are published
    if (sleepers.load(std::memory_order_seq_cst) > 0) futex_wake_all(&state);
    work(0);
    // No item is left to take: close the job, so a worker that wakes from
    // now on stays out, and wait for those inside to leave.
    state.store(closed + 2, std::memory_order_seq_cst);
    for (int spins = 0; joined.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < kCallerSpins)
        _mm_pause();
      else
        sched_yield();
    }
    jobs.fetch_add(1, std::memory_order_relaxed);
  }

  // Takes items from thread `self`'s share, then from the others'.
  void work(size_t self) {
    const DenormalsOff denormals(flags);
    const RangeFn fn = range;
    const void* const arg = loop;
    for (size_t k = 0; k < threads; ++k) {
      Share& share = shares[(self + k) % threads];
      const size_t take = k == 0 ? own_take : 1;
      const size_t end = share.end;
      for (size_t i; (i = share.next.fetch_add(take, std::memory_order_relaxed)) < end;)
        fn(arg, i, std::min(i + take, end));
    }
  }

  void worker_main(size_t self) {
    uint32_t seen = 0;
    for (;;) {
      const uint32_t now = wait_for_change(seen);
      seen = now;
      if (stopping.load(std::memory_order_acquire)) return;
      if ((now & 1u) == 0) continue;  // a closed job: it finished without us
      joined.fetch_add(1, std::memory_order_seq_cst);
      // Joined before the caller closed this job, or leave without reading
      // its fields (the caller may be writing the next job's).
      if (state.load(std::memory_order_seq_cst) == now) work(self);
      joined.fetch_sub(1, std::memory_order_release);
    }
  }

  // The state once it differs from `seen`: spins for kWorkerSpin, then
  // sleeps on the futex.
  uint32_t wait_for_change(uint32_t seen) {
    const auto deadline = std::chrono::steady_clock::now() + kWorkerSpin;
    for (int spins = 0;; ++spins) {
      const uint32_t now = state.load(std::memory_order_acquire);
      if (now != seen) return now;
      _mm_pause();
      if ((spins & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
    }
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    uint32_t now;
    while ((now = state.load(std::memory_order_seq_cst)) == seen) futex_wait(&state, seen);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
    return now;
  }

  const size_t threads;  // including the caller
  std::mutex execution_mutex;
  // The current job, written by the caller while no worker is inside it.
  RangeFn range = nullptr;
  const void* loop = nullptr;
  uint32_t flags = 0;
  size_t own_take = 1;  // items a thread takes from its own share at a time
  std::unique_ptr<Share[]> shares;  // one per thread
  // Odd while a job is open, even while none is; every job adds 2. The
  // futex word idle workers sleep on.
  alignas(64) std::atomic<uint32_t> state{0};
  alignas(64) std::atomic<uint32_t> joined{0};  // workers inside the open (or just closed) job
  std::atomic<uint32_t> sleepers{0};
  std::atomic<bool> stopping{false};
  std::atomic<uint64_t> jobs{0};
  std::vector<std::thread> workers;
};

namespace {

size_t divide_round_up(size_t n, size_t d) { return n / d + (n % d != 0); }

// Runs loop(begin, end) over ranges covering [0, items): on the calling
// thread (one range) for a null pool, a pool of one thread or a single
// item, else on the pool.
template <typename Loop>
void parallelize(pthreadpool_t pool, size_t items, uint32_t flags, const Loop& loop) {
  if (items == 0) return;
  if (pool == nullptr || pool->threads <= 1 || items == 1) {
    const DenormalsOff denormals(flags);
    loop(size_t{0}, items);
    return;
  }
  pool->run([](const void* l, size_t b, size_t e) { (*static_cast<const Loop*>(l))(b, e); }, &loop, items, flags);
}

// An N-dimensional range cut into tiles (a tile of 1 for an untiled
// dimension), visited in row-major order of the tiles as pthreadpool does.
template <size_t N>
struct Grid {
  Grid(const size_t (&ranges)[N], const size_t (&tile_sizes)[N]) {
    for (size_t d = 0; d < N; ++d) {
      range[d] = ranges[d];
      tile[d] = tile_sizes[d];
      tiles[d] = divide_round_up(range[d], tile[d]);
    }
  }
  size_t items() const {
    size_t n = 1;
    for (size_t d = 0; d < N; ++d) n *= tiles[d];
    return n;
  }
  // Runs call(start, size) for the tiles of items [begin, end): the first
  // one's coordinates decoded, the rest stepped from it in row-major order.
  template <typename Call>
  void for_range(size_t begin, size_t end, const Call& call) const {
    size_t t[N];  // tile coordinates
    for (size_t d = N, index = begin; d-- > 0;) {
      t[d] = index % tiles[d];
      index /= tiles[d];
    }
    size_t start[N], size[N];
    for (size_t d = 0; d < N; ++d) {
      start[d] = t[d] * tile[d];
      size[d] = std::min(tile[d], range[d] - start[d]);
    }
    for (size_t i = begin;;) {
      call(start, size);
      if (++i == end) return;
      for (size_t d = N; d-- > 0;) {
        if (++t[d] < tiles[d]) {
          start[d] += tile[d];
          size[d] = std::min(tile[d], range[d] - start[d]);
          break;
        }
        t[d] = 0;
        start[d] = 0;
        size[d] = std::min(tile[d], range[d]);
      }
    }
  }
  size_t range[N], tile[N], tiles[N];
};

// Runs call(start, size) for every tile of `grid`.
template <size_t N, typename Call>
void parallelize_grid(pthreadpool_t pool, const Grid<N>& grid, uint32_t flags, const Call& call) {
  parallelize(pool, grid.items(), flags, [&](size_t begin, size_t end) { grid.for_range(begin, end, call); });
}

}  // namespace

namespace hetsched::cpu::xnnpack {

uint64_t pool_jobs(pthreadpool_t pool) { return pool ? pool->jobs.load(std::memory_order_relaxed) : 0; }

}  // namespace hetsched::cpu::xnnpack

extern "C" {

pthreadpool_t pthreadpool_create(size_t threads_count) {
  if (threads_count == 0) threads_count = std::max(1u, std::thread::hardware_concurrency());
  auto* pool = new (std::nothrow) pthreadpool(threads_count);
  if (pool == nullptr) return nullptr;
  if (!pool->start()) {
    delete pool;
    return nullptr;
  }
  return pool;
}

size_t pthreadpool_get_threads_count(pthreadpool_t threadpool) { return threadpool ? threadpool->threads : 1; }

void pthreadpool_destroy(pthreadpool_t threadpool) {
  if (threadpool == nullptr) return;
  threadpool->stop();
  delete threadpool;
}

void pthreadpool_parallelize_1d(pthreadpool_t threadpool, pthreadpool_task_1d_t function, void* context, size_t range,
                                uint32_t flags) {
  parallelize(threadpool, range, flags, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) function(context, i);
  });
}

void pthreadpool_parallelize_1d_with_uarch(pthreadpool_t threadpool, pthreadpool_task_1d_with_id_t function,
                                           void* context, uint32_t default_uarch_index, uint32_t /*max_uarch_index*/,
                                           size_t range, uint32_t flags) {
  // x86 has one microarchitecture index (cpuinfo's 0), which is XNNPACK's default.
  parallelize(threadpool, range, flags, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) function(context, default_uarch_index, i);
  });
}

void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_1d_tile_1d_t function,
                                        void* context, size_t range, size_t tile, uint32_t flags) {
  parallelize_grid(threadpool, Grid<1>({range}, {tile}), flags,
                   [&](const size_t* s, const size_t* n) { function(context, s[0], n[0]); });
}

void pthreadpool_parallelize_2d(pthreadpool_t threadpool, pthreadpool_task_2d_t function, void* context,
                                size_t range_i, size_t range_j, uint32_t flags) {
  parallelize_grid(threadpool, Grid<2>({range_i, range_j}, {1, 1}), flags,
                   [&](const size_t* s, const size_t*) { function(context, s[0], s[1]); });
}

void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_2d_tile_1d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t tile_j, uint32_t flags) {
  parallelize_grid(threadpool, Grid<2>({range_i, range_j}, {1, tile_j}), flags,
                   [&](const size_t* s, const size_t* n) { function(context, s[0], s[1], n[1]); });
}

void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_2d_tile_2d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t tile_i, size_t tile_j,
                                        uint32_t flags) {
  parallelize_grid(threadpool, Grid<2>({range_i, range_j}, {tile_i, tile_j}), flags,
                   [&](const size_t* s, const size_t* n) { function(context, s[0], s[1], n[0], n[1]); });
}

void pthreadpool_parallelize_2d_tile_2d_with_uarch(pthreadpool_t threadpool,
                                                   pthreadpool_task_2d_tile_2d_with_id_t function, void* context,
                                                   uint32_t default_uarch_index, uint32_t /*max_uarch_index*/,
                                                   size_t range_i, size_t range_j, size_t tile_i, size_t tile_j,
                                                   uint32_t flags) {
  parallelize_grid(threadpool, Grid<2>({range_i, range_j}, {tile_i, tile_j}), flags,
                   [&](const size_t* s, const size_t* n) {
                     function(context, default_uarch_index, s[0], s[1], n[0], n[1]);
                   });
}

void pthreadpool_parallelize_3d(pthreadpool_t threadpool, pthreadpool_task_3d_t function, void* context,
                                size_t range_i, size_t range_j, size_t range_k, uint32_t flags) {
  parallelize_grid(threadpool, Grid<3>({range_i, range_j, range_k}, {1, 1, 1}), flags,
                   [&](const size_t* s, const size_t*) { function(context, s[0], s[1], s[2]); });
}

void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_3d_tile_1d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t range_k, size_t tile_k,
                                        uint32_t flags) {
  parallelize_grid(threadpool, Grid<3>({range_i, range_j, range_k}, {1, 1, tile_k}), flags,
                   [&](const size_t* s, const size_t* n) { function(context, s[0], s[1], s[2], n[2]); });
}

void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_3d_tile_2d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t range_k, size_t tile_j,
                                        size_t tile_k, uint32_t flags) {
  parallelize_grid(threadpool, Grid<3>({range_i, range_j, range_k}, {1, tile_j, tile_k}), flags,
                   [&](const size_t* s, const size_t* n) { function(context, s[0], s[1], s[2], n[1], n[2]); });
}

void pthreadpool_parallelize_3d_tile_2d_with_uarch(pthreadpool_t threadpool,
                                                   pthreadpool_task_3d_tile_2d_with_id_t function, void* context,
                                                   uint32_t default_uarch_index, uint32_t /*max_uarch_index*/,
                                                   size_t range_i, size_t range_j, size_t range_k, size_t tile_j,
                                                   size_t tile_k, uint32_t flags) {
  parallelize_grid(threadpool, Grid<3>({range_i, range_j, range_k}, {1, tile_j, tile_k}), flags,
                   [&](const size_t* s, const size_t* n) {
                     function(context, default_uarch_index, s[0], s[1], s[2], n[1], n[2]);
                   });
}

void pthreadpool_parallelize_4d(pthreadpool_t threadpool, pthreadpool_task_4d_t function, void* context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l, uint32_t flags) {
  parallelize_grid(threadpool, Grid<4>({range_i, range_j, range_k, range_l}, {1, 1, 1, 1}), flags,
                   [&](const size_t* s, const size_t*) { function(context, s[0], s[1], s[2], s[3]); });
}

void pthreadpool_parallelize_4d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_4d_tile_1d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                        size_t tile_l, uint32_t flags) {
  parallelize_grid(threadpool, Grid<4>({range_i, range_j, range_k, range_l}, {1, 1, 1, tile_l}), flags,
                   [&](const size_t* s, const size_t* n) { function(context, s[0], s[1], s[2], s[3], n[3]); });
}

void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_4d_tile_2d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                        size_t tile_k, size_t tile_l, uint32_t flags) {
  parallelize_grid(threadpool, Grid<4>({range_i, range_j, range_k, range_l}, {1, 1, tile_k, tile_l}), flags,
                   [&](const size_t* s, const size_t* n) {
                     function(context, s[0], s[1], s[2], s[3], n[2], n[3]);
                   });
}

void pthreadpool_parallelize_4d_tile_2d_with_uarch(pthreadpool_t threadpool,
                                                   pthreadpool_task_4d_tile_2d_with_id_t function, void* context,
                                                   uint32_t default_uarch_index, uint32_t /*max_uarch_index*/,
                                                   size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                                   size_t tile_k, size_t tile_l, uint32_t flags) {
  parallelize_grid(threadpool, Grid<4>({range_i, range_j, range_k, range_l}, {1, 1, tile_k, tile_l}), flags,
                   [&](const size_t* s, const size_t* n) {
                     function(context, default_uarch_index, s[0], s[1], s[2], s[3], n[2], n[3]);
                   });
}

void pthreadpool_parallelize_5d(pthreadpool_t threadpool, pthreadpool_task_5d_t function, void* context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                uint32_t flags) {
  parallelize_grid(threadpool, Grid<5>({range_i, range_j, range_k, range_l, range_m}, {1, 1, 1, 1, 1}), flags,
                   [&](const size_t* s, const size_t*) { function(context, s[0], s[1], s[2], s[3], s[4]); });
}

void pthreadpool_parallelize_5d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_5d_tile_1d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                        size_t range_m, size_t tile_m, uint32_t flags) {
  parallelize_grid(threadpool, Grid<5>({range_i, range_j, range_k, range_l, range_m}, {1, 1, 1, 1, tile_m}), flags,
                   [&](const size_t* s, const size_t* n) {
                     function(context, s[0], s[1], s[2], s[3], s[4], n[4]);
                   });
}

void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_5d_tile_2d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                        size_t range_m, size_t tile_l, size_t tile_m, uint32_t flags) {
  parallelize_grid(threadpool, Grid<5>({range_i, range_j, range_k, range_l, range_m}, {1, 1, 1, tile_l, tile_m}),
                   flags, [&](const size_t* s, const size_t* n) {
                     function(context, s[0], s[1], s[2], s[3], s[4], n[3], n[4]);
                   });
}

void pthreadpool_parallelize_6d(pthreadpool_t threadpool, pthreadpool_task_6d_t function, void* context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l, size_t range_m,
                                size_t range_n, uint32_t flags) {
  parallelize_grid(threadpool, Grid<6>({range_i, range_j, range_k, range_l, range_m, range_n}, {1, 1, 1, 1, 1, 1}),
                   flags, [&](const size_t* s, const size_t*) {
                     function(context, s[0], s[1], s[2], s[3], s[4], s[5]);
                   });
}

void pthreadpool_parallelize_6d_tile_1d(pthreadpool_t threadpool, pthreadpool_task_6d_tile_1d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                        size_t range_m, size_t range_n, size_t tile_n, uint32_t flags) {
  parallelize_grid(threadpool,
                   Grid<6>({range_i, range_j, range_k, range_l, range_m, range_n}, {1, 1, 1, 1, 1, tile_n}), flags,
                   [&](const size_t* s, const size_t* n) {
                     function(context, s[0], s[1], s[2], s[3], s[4], s[5], n[5]);
                   });
}

void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t threadpool, pthreadpool_task_6d_tile_2d_t function,
                                        void* context, size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                        size_t range_m, size_t range_n, size_t tile_m, size_t tile_n, uint32_t flags) {
  parallelize_grid(threadpool,
                   Grid<6>({range_i, range_j, range_k, range_l, range_m, range_n}, {1, 1, 1, 1, tile_m, tile_n}),
                   flags, [&](const size_t* s, const size_t* n) {
                     function(context, s[0], s[1], s[2], s[3], s[4], s[5], n[4], n[5]);
                   });
}

// The deprecated names pthreadpool.h still declares, for a host that
// calls them on a pool it shares with us.
void pthreadpool_compute_1d(pthreadpool_t threadpool, pthreadpool_function_1d_t function, void* argument,
                            size_t range) {
  pthreadpool_parallelize_1d(threadpool, function, argument, range, 0);
}

void pthreadpool_compute_1d_tiled(pthreadpool_t threadpool, pthreadpool_function_1d_tiled_t function, void* argument,
                                  size_t range, size_t tile) {
  pthreadpool_parallelize_1d_tile_1d(threadpool, function, argument, range, tile, 0);
}

void pthreadpool_compute_2d(pthreadpool_t threadpool, pthreadpool_function_2d_t function, void* argument,
                            size_t range_i, size_t range_j) {
  pthreadpool_parallelize_2d(threadpool, function, argument, range_i, range_j, 0);
}

void pthreadpool_compute_2d_tiled(pthreadpool_t threadpool, pthreadpool_function_2d_tiled_t function, void* argument,
                                  size_t range_i, size_t range_j, size_t tile_i, size_t tile_j) {
  pthreadpool_parallelize_2d_tile_2d(threadpool, function, argument, range_i, range_j, tile_i, tile_j, 0);
}

void pthreadpool_compute_3d_tiled(pthreadpool_t threadpool, pthreadpool_function_3d_tiled_t function, void* argument,
                                  size_t range_i, size_t range_j, size_t range_k, size_t tile_i, size_t tile_j,
                                  size_t tile_k) {
  parallelize_grid(threadpool, Grid<3>({range_i, range_j, range_k}, {tile_i, tile_j, tile_k}), 0,
                   [&](const size_t* s, const size_t* n) { function(argument, s[0], s[1], s[2], n[0], n[1], n[2]); });
}

void pthreadpool_compute_4d_tiled(pthreadpool_t threadpool, pthreadpool_function_4d_tiled_t function, void* argument,
                                  size_t range_i, size_t range_j, size_t range_k, size_t range_l, size_t tile_i,
                                  size_t tile_j, size_t tile_k, size_t tile_l) {
  parallelize_grid(threadpool, Grid<4>({range_i, range_j, range_k, range_l}, {tile_i, tile_j, tile_k, tile_l}), 0,
                   [&](const size_t* s, const size_t* n) {
                     function(argument, s[0], s[1], s[2], s[3], n[0], n[1], n[2], n[3]);
                   });
}

}  // extern "C"
