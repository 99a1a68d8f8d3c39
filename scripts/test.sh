#!/usr/bin/env bash
# The whole test suite: install what is missing, build (scripts/build.sh: the
# same build as scripts/demo.sh, warnings as errors),
# run every test through ctest, then the CPU concurrency tests under
# ThreadSanitizer (scripts/tsan.sh, its own build-tsan/), the test suite
# under ASan+UBSan (scripts/asan.sh, build-asan/) and a short run of every
# fuzz target (scripts/fuzz.sh, build-fuzz/). docs/reliability.md says what
# each covers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
bash scripts/tsan.sh
bash scripts/asan.sh
bash scripts/fuzz.sh 20
