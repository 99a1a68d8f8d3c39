// XNNPACK as a process-wide library: its one-time initialisation, the
// thread pools its runtimes run on, and its status codes as hetsched Status.
#pragma once

#include <pthreadpool.h>
#include <xnnpack.h>

#include <memory>
#include <string_view>

#include "hetsched/status.h"

namespace hetsched::cpu::xnnpack {

// Initialises XNNPACK on the first call (xnn_initialize); every later call
// returns the first call's result. Thread-safe. Fails with kUnsupported on
// a CPU that lacks what XNNPACK needs and kInternal otherwise; the caller
// then runs on the portable kernels.
Status ensure_initialized();

// Tests only: while `unavailable` is set, ensure_initialized() fails as on
// an unsupported CPU (XNNPACK's real state is left as it is).
void simulate_unavailable_for_testing(bool unavailable);

// A pool of `threads` threads (0: one per hardware thread), the caller
// counted: the CPU delegate's one pool (delegates/cpu/thread_pool.h), which
// it hands to all its islands, which run one at a time on the "cpu"
// resource (a loop started while the pool is busy runs on its caller).
// Every runtime created on it must be deleted before the last owner lets
// go of it.
using Threadpool = std::shared_ptr<pthreadpool>;
Result<Threadpool> make_threadpool(int threads);

// ok for xnn_status_success; otherwise "<call>: xnn_status_<name>", kInternal
// (kUnsupported for xnn_status_unsupported_parameter/_hardware).
Status check_xnn(enum xnn_status status, std::string_view call);

}  // namespace hetsched::cpu::xnnpack
