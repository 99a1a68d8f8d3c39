// hetsched's own implementation of pthreadpool's C API (pthreadpool.h,
// the 2021-05 snapshot Debian ships), which XNNPACK's runtimes, the layout
// conversions and the NHWC kernels run their loops on.
//
// Why not the system libpthreadpool: its caller waits, after every
// parallel loop, until every worker has woken, checked in and checked out,
// even when the caller has done all the work itself. An XNNPACK runtime
// makes one such call per operator (EfficientNet-B0: ~220 a run), so on a
// machine whose cores are busy with other processes each call waits for the
// scheduler to run a worker: 2 threads on the loaded 2-core development
// machine ran EfficientNet-B0 in 1.1 s against 31 ms at 1 thread.
//
// A pthreadpool_t here is the CPU delegate's one ThreadPool
// (delegates/cpu/thread_pool.h, which says how a loop runs), so XNNPACK's
// loops share its workers with the fast and the portable kernels.
//
// XNNPACK is a shared library that calls pthreadpool_* through its PLT:
// these definitions, linked into the executable or exported by
// libhetsched.so (api/exports.map), come first in the lookup order, so
// XNNPACK binds to them although libpthreadpool.so.0 is loaded as its
// dependency. pool_jobs() lets a test check that it did.
#pragma once

#include <pthreadpool.h>

#include <cstdint>

#include "delegates/cpu/thread_pool.h"

namespace hetsched::cpu::xnnpack {

// The ThreadPool a pthreadpool_t is (nullptr for nullptr), for the fast and
// portable kernels to split over the same workers.
ThreadPool* thread_pool_of(pthreadpool_t pool);

// Parallel loops `pool` has run through its workers (loops run on the
// calling thread alone, for a pool of one thread or a range of one item,
// are not counted). 0 for a null pool.
uint64_t pool_jobs(pthreadpool_t pool);

}  // namespace hetsched::cpu::xnnpack
