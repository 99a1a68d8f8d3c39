#!/usr/bin/env bash
# hetsched's CPU delegate (engine xnnpack) against ONNX Runtime 1.30.0 (CPU
# execution provider) on the PP-OCR models, same input, same thread count,
# in one run: for each model and thread count, model_bench and
# scripts/ort/bench.js are run alternately (rounds of each, so a busy machine
# slows both alike), and the table gives the median of their medians and the
# ratio hetsched / ORT (the issue's target: <= 1.0).
#
# usage: bench/ort_compare.sh [--build DIR] [--threads "1 2"] [--runs N] [--warmup N]
#                             [--rounds N] [--engine xnnpack|portable]
# Needs model_bench built (configure with -DHETSCHED_BUILD_BENCH=ON, then
# `ninja -C DIR model_bench`), and fetches the models and onnxruntime-node
# through scripts/ort/setup_models.sh. Inputs are the references' input_0.bin
# (a synthetic text page, scripts/ort/common.js).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
threads_list="1 2"
runs=10
warmup=3
rounds=3
engine=xnnpack
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --threads) threads_list="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --engine) engine="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ort_compare: unknown option '$1'" >&2; exit 2 ;;
  esac
done

bench="$build/bench/model_bench"
if [ ! -x "$bench" ]; then
  echo "ort_compare: $bench not found; build it: cmake -S $root -B $build -DHETSCHED_BUILD_BENCH=ON && ninja -C $build model_bench" >&2
  exit 2
fi

manifest="$build/models/manifest.txt"
"$root/scripts/ort/setup_models.sh" "$manifest" >/dev/null
if ! grep -q '^status=ready' "$manifest"; then
  echo "ort_compare: models unavailable: $(sed -n 's/^reason=//p' "$manifest")" >&2
  exit 2
fi
value() { sed -n "s/^$1=//p" "$manifest"; }

json_field() {  # json_field NAME < line
  sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"
}

input_shape() {  # input_shape reference.json → 1x3x640x640
  sed -n '/"inputs"/,/"file"/p' "$1" | tr -d ' \n' | sed 's/.*"shape":\[\([0-9,]*\)\].*/\1/' | tr , x
}

median() {  # median of the arguments
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'
}

echo "# hetsched $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') engine=$engine vs ONNX Runtime (CPU EP)"
echo "# host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# per measurement: $warmup warm-up + $runs timed runs, median; $rounds alternating rounds, median of medians"
rows=()
details=()
for key in det cls; do
  model="$(value "${key}_model")"
  ref_dir="$(dirname "$(value "${key}_reference")")"
  shape="$(input_shape "$ref_dir/reference.json")"
  input="$ref_dir/input_0.bin"
  for t in $threads_list; do
    hs=(); ort=()
    for ((r = 0; r < rounds; ++r)); do
      out="$("$bench" --model "$model" --shape "$shape" --input "$input" --threads "$t" --engine "$engine" \
              --warmup "$warmup" --runs "$runs")"
      line="$(grep '^json: ' <<<"$out")"
      hs+=("$(json_field median_ms <<<"$line")")
      ort_line="$(HETSCHED_ORT_MODULES="$(value ort_modules)" \
                  node "$root/scripts/ort/bench.js" --model "$model" --shape "$shape" --input "$input" \
                  --threads "$t" --warmup "$warmup" --runs "$runs")"
      ort+=("$(json_field median_ms <<<"$ort_line")")
    done
    hs_ms="$(median "${hs[@]}")"
    ort_ms="$(median "${ort[@]}")"
    rows+=("$(printf '%-4s %-12s %7s %12.2f %12.2f %8.2f' "$key" "$shape" "$t" "$hs_ms" "$ort_ms" \
              "$(awk -v a="$hs_ms" -v b="$ort_ms" 'BEGIN {print a / b}')")")
    details+=("$key threads=$t: hetsched rounds ${hs[*]} ms; ORT rounds ${ort[*]} ms")
    details+=("$(grep -E '^  (step|cpu island)' <<<"$out" | sed "s/^/  $key threads=$t (last round) /")")
  done
done

echo
printf '%-4s %-12s %7s %12s %12s %8s\n' model input threads hetsched_ms ort_ms ratio
printf '%s\n' "${rows[@]}"
echo
echo "# rounds and hetsched's per-step breakdown (RunStats: one step per island and handoff)"
printf '%s\n' "${details[@]}"

# RunStats records no per-op times; model_bench --per-op times each node alone.
first_threads="${threads_list%% *}"
for key in det cls; do
  model="$(value "${key}_model")"
  ref_dir="$(dirname "$(value "${key}_reference")")"
  shape="$(input_shape "$ref_dir/reference.json")"
  echo
  echo "# $key: per-op estimate at threads=$first_threads (model_bench --per-op 3)"
  "$bench" --model "$model" --shape "$shape" --input "$ref_dir/input_0.bin" --threads "$first_threads" \
    --engine "$engine" --warmup 1 --runs 3 --per-op 3 | sed -n '/per op, each node alone/,$p'
done
