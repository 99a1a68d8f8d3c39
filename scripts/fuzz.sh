#!/usr/bin/env bash
# Builds the libFuzzer targets of test/fuzz/ (clang, -O1, ASan+UBSan; only
# those targets and the libraries they link, in build-fuzz/) and runs each
# for SECONDS (default 60), or until RUNS executions when given, whichever
# comes first. Fails on any crash, leak, timeout (one input over 10 s) or
# out-of-memory (one input over 2 GiB). Prints per target: executions,
# coverage (cov: edges, ft: features), corpus size and crashes.
#
#   scripts/fuzz.sh [SECONDS [RUNS]]
#   FUZZ_TARGETS="graph_file_fuzz program_file_fuzz" scripts/fuzz.sh 600
#
# Seeds: test/fuzz/corpus/<target>/ (committed, read only). New inputs go to
# build-fuzz/corpus/<target>/, kept between runs; a crashing input is written
# to build-fuzz/artifacts/<target>/ and reproduces with
#   build-fuzz/test/fuzz/<target> <file>
# Called with a short time by scripts/test.sh; docs/reliability.md has the
# long campaign's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
runs=${2:--1}
dir=build-fuzz
all_targets="onnx_import_fuzz graph_file_fuzz program_file_fuzz vgf_file_fuzz profile_yaml_fuzz cli_input_fuzz"
targets=${FUZZ_TARGETS:-$all_targets}

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
  -DHETSCHED_BUILD_FUZZ=ON -DHETSCHED_BUILD_TESTS=OFF -DHETSCHED_BUILD_BENCH=OFF >/dev/null
# shellcheck disable=SC2086
cmake --build "$dir" --target $targets

export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
failed=()
printf '%-20s %12s %8s %8s %8s %8s  %s\n' target executions seconds cov ft corpus result
for t in $targets; do
  seeds=test/fuzz/corpus/$t
  work=$dir/corpus/$t
  artifacts=$dir/artifacts/$t/
  log=$dir/logs/$t.log
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  start=$(date +%s)
  rc=0
  "$dir/test/fuzz/$t" -max_total_time="$seconds" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts" "$work" "$seeds" >"$log" 2>&1 || rc=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(find "$work" -type f | wc -l)
  crashes=$(find "$artifacts" -type f | wc -l)
  result="0 crashes"
  if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
    result="FAILED (exit $rc, $crashes artifact(s) in $artifacts; log $log)"
    failed+=("$t")
  fi
  printf '%-20s %12s %8s %8s %8s %8s  %s\n' "$t" "${execs:-?}" "$elapsed" "${cov:-?}" "${ft:-?}" "$corpus" "$result"
done
if [ ${#failed[@]} -ne 0 ]; then
  for t in "${failed[@]}"; do
    echo "--- $t: the report ---" >&2
    grep -E -A30 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' "$dir/logs/$t.log" | head -60 >&2 || true
  done
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: every target ran ${seconds}s (runs ${runs}) with no crash, leak or timeout"
