#!/usr/bin/env bash
# ThreadSanitizer run of the CPU-only scheduler concurrency tests
# (SchedulerTest.Concurrent*: many threads on one session whose islands are
# all on the CPU delegate) and of the CPU delegate's thread pool with its
# workers (delegates/cpu/thread_pool.h: TaskPoolTest.*, the pool-only
# CpuThreadPoolTest cases). Builds only those tests in its own folder, build-tsan/,
# at -O1 with -fsanitize=thread (HETSCHED_SANITIZE), and fails on any report.
# Called by scripts/test.sh after the main ctest run.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-tsan

# PRE_TEST discovery: the build does not run the instrumented binary to list
# its tests (gtest_discover_tests); this script runs it itself.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
  -DHETSCHED_SANITIZE=thread -DHETSCHED_BUILD_TESTS=ON -DHETSCHED_BUILD_BENCH=OFF \
  -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST >/dev/null
cmake --build "$dir" --target scheduler_test task_pool_test cpu_thread_pool_test

# Kernels with high mmap entropy can break TSan's fixed memory layout
# ("unexpected memory mapping"); running without ASLR avoids it.
no_aslr=()
if setarch "$(uname -m)" -R true 2>/dev/null; then no_aslr=(setarch "$(uname -m)" -R); fi

# No Vulkan driver: these tests must stay CPU-only (a GPU island would fail
# here rather than run uninstrumented driver threads).
export VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp halt_on_error=1 exitcode=66"
# The CPU-only concurrency tests. They use cpu threads: 1, so the CPU
# delegate's pool starts no workers: XNNPACK's code is not instrumented, and
# its loops on a worker would be reported falsely. The threads under test are
# the test's and the scheduler's. Repeated: each run is ~0.1 s, and more runs
# are more interleavings.
filter='SchedulerTest.Concurrent*'
test_bin=("${no_aslr[@]}" "$dir/test/scheduler_test")
count=$("${test_bin[@]}" --gtest_filter="$filter" --gtest_list_tests | grep -c '^  ' || true)
if [ "$count" -eq 0 ]; then
  echo "tsan.sh: no test matches $filter" >&2
  exit 1
fi
"${test_bin[@]}" --gtest_filter="$filter" --gtest_repeat=20 --gtest_brief=1
echo "tsan.sh: $count test(s) x 20 runs under ThreadSanitizer, no reports"

# The pool itself, workers and all: its jobs here are the tests' own
# (instrumented) tasks, handed over through the pool's atomics, which TSan
# follows; a loop inside a loop; the pthreadpool door and the fast kernels'
# door on one pool; several callers at once.
"${no_aslr[@]}" "$dir/test/task_pool_test" --gtest_repeat=5 --gtest_brief=1
"${no_aslr[@]}" "$dir/test/cpu_thread_pool_test" --gtest_repeat=5 --gtest_brief=1 \
  --gtest_filter='CpuThreadPoolTest.LoopInsideALoop*:CpuThreadPoolTest.PthreadpoolAndTaskPool*'
echo "tsan.sh: the CPU delegate's thread pool x 5 runs under ThreadSanitizer, no reports"
