#!/usr/bin/env bash
# Configures and builds build/ the one way scripts/demo.sh and scripts/test.sh
# both use (Release, warnings as errors), so running one after the other
# builds each file once. Arguments go to `cmake --build` (e.g. --target X).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETSCHED_WERROR=ON >/dev/null
cmake --build build "$@"
