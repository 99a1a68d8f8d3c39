#!/usr/bin/env bash
# ThreadSanitizer run of the CPU-only scheduler concurrency tests
# (SchedulerTest.Concurrent*: many threads on one session whose islands are
# all on the CPU delegate). Builds only scheduler_test in its own folder, build-tsan/,
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
cmake --build "$dir" --target scheduler_test

# Kernels with high mmap entropy can break TSan's fixed memory layout
# ("unexpected memory mapping"); running without ASLR avoids it.
no_aslr=()
if setarch "$(uname -m)" -R true 2>/dev/null; then no_aslr=(setarch "$(uname -m)" -R); fi

# No Vulkan driver: these tests must stay CPU-only (a GPU island would fail
# here rather than run uninstrumented driver threads).
export VK_ICD_FILENAMES=/nonexistent VK_DRIVER_FILES=/nonexistent
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp halt_on_error=1 exitcode=66"
# The CPU-only concurrency tests. They use cpu threads: 1, so XNNPACK's
# pthreadpool and TBB start no workers of their own: TSan cannot see the
# futex/atomic handoffs of those uninstrumented pools, and our callbacks on
# their workers would be reported falsely. The threads under test are the
# test's and the scheduler's. Repeated: each run is ~0.1 s, and more runs are
# more interleavings.
filter='SchedulerTest.Concurrent*'
test_bin=("${no_aslr[@]}" "$dir/test/scheduler_test")
count=$("${test_bin[@]}" --gtest_filter="$filter" --gtest_list_tests | grep -c '^  ' || true)
if [ "$count" -eq 0 ]; then
  echo "tsan.sh: no test matches $filter" >&2
  exit 1
fi
"${test_bin[@]}" --gtest_filter="$filter" --gtest_repeat=20 --gtest_brief=1
echo "tsan.sh: $count test(s) x 20 runs under ThreadSanitizer, no reports"
