// hetsched's own implementation of pthreadpool's C API (pthreadpool.h,
// the 2021-05 snapshot Debian ships), which XNNPACK's runtimes, the layout
// conversions, the NHWC kernels and the fast kernels all run their loops on.
//
// Why not the system libpthreadpool: its caller waits, after every
// parallel loop, until every worker has woken, checked in and checked out,
// even when the caller has done all the work itself. An XNNPACK runtime
// makes one such call per operator (EfficientNet-B0: ~220 a run), so on a
// machine whose cores are busy with other processes each call waits for the
// scheduler to run a worker: 2 threads on the loaded 2-core development
// machine ran EfficientNet-B0 in 1.1 s against 31 ms at 1 thread.
//
// Here a parallel loop is a job that the caller opens, works on and closes:
//   - each thread (the caller is thread 0) first takes items from its own
//     contiguous share, then takes what is left of the others' shares;
//   - a worker joins a job only while it is open; once no item is left, the
//     caller closes the job and waits only for workers that joined it (they
//     hold an item or are about to find none), never for one that has not
//     woken yet — that one sees a closed job and goes back to waiting;
//   - an idle worker spins briefly (XNNPACK's operators come back to back),
//     then sleeps on a futex until the next job.
// Calls on one pool from several threads are serialised, as pthreadpool's
// are. A task must not start a parallel loop on its own pool.
//
// XNNPACK is a shared library that calls pthreadpool_* through its PLT:
// these definitions, linked into the executable or exported by
// libhetsched.so (api/exports.map), come first in the lookup order, so
// XNNPACK binds to them although libpthreadpool.so.0 is loaded as its
// dependency. pool_jobs() lets a test check that it did.
#pragma once

#include <pthreadpool.h>

#include <cstdint>

namespace hetsched::cpu::xnnpack {

// Parallel loops `pool` has run through its workers (loops run on the
// calling thread alone, for a pool of one thread or a range of one item,
// are not counted). 0 for a null pool.
uint64_t pool_jobs(pthreadpool_t pool);

}  // namespace hetsched::cpu::xnnpack
