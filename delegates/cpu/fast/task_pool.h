// The fast kernels' door to the CPU delegate's one thread pool
// (delegates/cpu/thread_pool.h, which XNNPACK and the portable kernels
// share): TaskPool is that pool, and its run(tasks, fn, context) runs
// fn(context, i) once for every i in [0, tasks), the caller taking part.
// The fast kernels usually reach it through fast_op.h's parallel_tasks().
// Until the pools were one, this was a pool of its own with its own
// workers (a shared task counter; workers joined only an open job).
#pragma once

#include <cstddef>
#include <memory>

#include "delegates/cpu/thread_pool.h"

namespace hetsched::cpu::fast {

// `TaskPool pool(threads)` makes a pool of its own (tests, benchmarks); the
// CPU delegate hands its fast kernels its one pool.
using TaskPool = cpu::ThreadPool;

using SharedTaskPool = std::shared_ptr<TaskPool>;

// memcpy of `bytes` in chunks over `pool` (nullptr: this thread), for an
// island's edges: one core streams a few GB/s, and a 6 MiB edge cost ~1 ms
// on one thread of the H100 machine's Xeon.
void parallel_copy(const void* src, void* dst, size_t bytes, TaskPool* pool);

}  // namespace hetsched::cpu::fast
