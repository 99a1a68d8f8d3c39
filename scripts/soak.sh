#!/usr/bin/env bash
# Soak test: 8 threads × as many requests as fit in SECONDS (default 120)
# over the shipped profiles that run on this machine, on the bundled models
# (bench/soak.cc). Every output is checked against the first of its
# model+profile; prints requests, failures and p50/p99 latency per pair and
# exits 1 on any failure or difference.
#
#   scripts/soak.sh [SECONDS] [PROFILE.yaml...]     (default: configs/*.yaml)
#   SOAK_THREADS=16 SOAK_BUILD=build-gpu scripts/soak.sh 600 configs/vulkan.yaml
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
shift || true
build=${SOAK_BUILD:-build}
profiles=("$@")
if [ ${#profiles[@]} -eq 0 ]; then profiles=(configs/*.yaml); fi
ninja -C "$build" soak >/dev/null
exec "$build/bench/soak" --seconds "$seconds" --threads "${SOAK_THREADS:-8}" "${profiles[@]}"
