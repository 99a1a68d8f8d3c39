#include "delegates/cpu/xnnpack/threadpool.h"

#include <algorithm>
#include <climits>
#include <new>
#include <system_error>

#include "delegates/cpu/thread_pool.h"

// The pool behind pthreadpool_t (declared, opaque, in pthreadpool.h): the
// CPU delegate's one pool, so XNNPACK's loops and the fast and portable
// kernels' share its workers.
struct pthreadpool final : hetsched::cpu::ThreadPool {
  using ThreadPool::ThreadPool;
};

static_assert(PTHREADPOOL_FLAG_DISABLE_DENORMALS == hetsched::cpu::kDisableDenormals);

namespace {

size_t divide_round_up(size_t n, size_t d) { return n / d + (n % d != 0); }

// Runs loop(begin, end) over ranges covering [0, items): on the calling
// thread (one range) for a null pool, a pool of one thread or a single
// item, else on the pool.
template <typename Loop>
void parallelize(pthreadpool_t pool, size_t items, uint32_t flags, const Loop& loop) {
  if (items == 0) return;
  const auto range = [](const void* l, size_t b, size_t e) { (*static_cast<const Loop*>(l))(b, e); };
  if (pool == nullptr)
    hetsched::cpu::run_serially(range, &loop, items, flags);
  else
    pool->run_ranges(range, &loop, items, flags, hetsched::cpu::JobSource::kPthreadpool);
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

ThreadPool* thread_pool_of(pthreadpool_t pool) { return pool; }

uint64_t pool_jobs(pthreadpool_t pool) {
  return pool ? pool->stats().jobs[static_cast<int>(JobSource::kPthreadpool)] : 0;
}

}  // namespace hetsched::cpu::xnnpack

extern "C" {

pthreadpool_t pthreadpool_create(size_t threads_count) {
  try {
    return new pthreadpool(static_cast<int>(std::min<size_t>(threads_count, INT_MAX)));
  } catch (const std::system_error&) {
    return nullptr;  // the system refused a thread
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

size_t pthreadpool_get_threads_count(pthreadpool_t threadpool) {
  return threadpool ? static_cast<size_t>(threadpool->threads()) : 1;
}

void pthreadpool_destroy(pthreadpool_t threadpool) { delete threadpool; }

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
