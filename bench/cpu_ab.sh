#!/usr/bin/env bash
# The CPU delegate under several variants, alternated on the same models:
# builds (another checkout's hetsched) and environment switches
# (HETSCHED_CPU_ARENA=off, HETSCHED_DEPTHWISE=off, HETSCHED_POINTWISE=on...),
# `hetsched bench M --threads T -n N` per variant, in rounds so that other
# load on the machine slows every variant alike; prints per model the median
# over the rounds of each variant's p50. With --ort, ONNX Runtime's CPU
# latency too (bench/ort_time.py: its Python package, for machines without
# Node.js such as the GPU machine; bench/ort_compare.sh where Node is), timed
# in every round beside the variants, and each variant's ratio to it (the
# medians', and the range of the rounds' own ratios).
# docs/models.md's session-12 A/B tables came from it.
#
# usage: bench/cpu_ab.sh [--threads "1 16"] [--rounds R] [-n N] [--ort] [--cpus LIST] [--stat p50|min]
#                        VARIANT... -- MODEL[:SHAPE]...
# --cpus runs every side under `taskset -c LIST` (one core for 1-thread
# figures on a many-core host, so that no run migrates between cores).
# --stat min takes each measurement's best run instead of its median (the
# issues' "best of runs", for a shared host whose medians swing).
# VARIANT: "default", NAME=VALUE[,NAME=VALUE...] (environment for the
# default build), or @PATH[:NAME=VALUE,...] (another hetsched binary). SHAPE
# (the first input's, for --ort, and hetsched's --input-shape where given;
# reading the input's name needs python3's onnx) defaults to 1x3x224x224.
#   bench/cpu_ab.sh --threads 1 --rounds 3 default HETSCHED_CPU_ARENA=off -- resnet50.onnx
#   bench/cpu_ab.sh --threads "16 1" --rounds 2 --ort default @/tmp/old/hetsched -- yolo_n.onnx:1x3x320x320
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
hetsched=$root/build/cli/hetsched
threads="1"
rounds=3
runs=20
ort=0
pin=()
stat=p50
variants=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -n) runs=$2; shift 2 ;;
    --ort) ort=1; shift ;;
    --cpus) pin=(taskset -c "$2"); shift 2 ;;
    --stat) stat=$2; shift 2 ;;
    -*) echo "cpu_ab: unknown option '$1'" >&2; exit 2 ;;
    *) variants+=("$1"); shift ;;
  esac
done
[ "${1:-}" = "--" ] && [ ${#variants[@]} -gt 0 ] && [ $# -gt 1 ] ||
  { echo "usage: bench/cpu_ab.sh [--threads \"T...\"] [--rounds R] [-n N] [--ort] [--cpus LIST] [--stat p50|min] VARIANT... -- MODEL[:SHAPE]..." >&2; exit 2; }
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One variant's p50 in ms on model $2 with $3 threads ($4: --input-shape
# NAME=SHAPE for a model with dynamic dims, or nothing).
p50() {
  local variant=$1 model=$2 t=$3 given=${4:-} bin=$hetsched envs=""
  case "$variant" in
    default) ;;
    @*) bin=${variant#@}; bin=${bin%%:*}; [ "$variant" != "@$bin" ] && envs=${variant#*:} ;;
    *) envs=$variant ;;
  esac
  printf 'name: cpu_ab\ndelegates:\n  cpu: {enabled: true, engine: xnnpack, threads: %s}\n' "$t" > "$work/cpu$t.yaml"
  env ${envs//,/ } "${pin[@]}" "$bin" bench "$model" --profile "$work/cpu$t.yaml" -n "$runs" --warmup 3 $given 2>&1 |
    grep -oE "$stat [0-9.]+ ms" | head -1 | awk '{print $2}'
}

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {print NR ? v[int((NR+1)/2)] : "-"}'; }

for spec in "$@"; do
  model=${spec%%:*}
  shape=1x3x224x224 given=""
  # A SHAPE given is also hetsched's --input-shape for the first input (a
  # model with dynamic dims, such as PP-OCR det, needs it).
  if [ "$spec" != "$model" ]; then
    shape=${spec#*:}
    name=$(python3 -c 'import onnx, sys; print(onnx.load(sys.argv[1], load_external_data=False).graph.input[0].name)' "$model")
    given="--input-shape $name=$shape"
  fi
  for t in $threads; do
    declare -A got=()
    for ((r = 1; r <= rounds; ++r)); do
      for v in "${variants[@]}"; do got[$v]="${got[$v]:-} $(p50 "$v" "$model" "$t" "$given")"; done
      # ORT in every round too, so that a machine whose speed drifts
      # between rounds (a shared host) slows both sides alike.
      [ "$ort" = 1 ] && got[ORT]="${got[ORT]:-} $("${pin[@]}" python3 "$root/bench/ort_time.py" "$model" "$shape" "$t" "$stat" 2>&1 | tail -1)"
    done
    line="$(basename "$model" .onnx) threads=$t"
    for v in "${variants[@]}"; do line="$line | $v $(echo "${got[$v]}" | median) ms"; done
    if [ "$ort" = 1 ]; then
      ort_ms=$(echo "${got[ORT]}" | median)
      line="$line | ORT $ort_ms ms"
      # Each variant over ORT, the medians' ratio, and its rounds' range.
      for v in "${variants[@]}"; do
        line="$line | $v/ORT $(paste -d' ' <(echo "${got[$v]}" | tr ' ' '\n' | grep -v '^$') \
          <(echo "${got[ORT]}" | tr ' ' '\n' | grep -v '^$') |
          awk -v a="$(echo "${got[$v]}" | median)" -v b="$ort_ms" '
            $2 > 0 { r = $1 / $2; lo = (NR == 1 || r < lo) ? r : lo; hi = (NR == 1 || r > hi) ? r : hi }
            END { printf "%.2f (rounds %.2f-%.2f)", (b > 0 ? a / b : 0), lo, hi }')"
      done
    fi
    echo "$line"
    unset got
  done
done
