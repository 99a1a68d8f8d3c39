#!/usr/bin/env bash
# The whole test suite: install what is missing, build with warnings as errors,
# run every test through ctest, then the CPU concurrency tests under
# ThreadSanitizer (scripts/tsan.sh, its own build-tsan/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETSCHED_WERROR=ON >/dev/null
cmake --build build
ctest --test-dir build --output-on-failure -j "$(nproc)"
bash scripts/tsan.sh
