#!/usr/bin/env bash
# Models as an exporter writes them, on the CPU delegate beside ONNX Runtime:
# for each torchvision model, export it (scripts/models/export_torchvision.py,
# with --dynamo the exporter PyTorch 2.9+ uses by default), run `hetsched
# bench --profile-ops` and bench/ort_time.py at the same thread count, and
# print both latencies and the nodes that ran on portable kernels (by op
# type, count and time): an exporter form that XNNPACK and the fast kernels
# do not take shows up there. docs/models.md's session-22 survey of PyTorch
# 2.11's exports on the 16-core Xeon came from it.
#
# usage: bench/portable_survey.sh [--hetsched PATH] [--threads N] [--dynamo] [--dir DIR] MODEL[:SIZE]...
#   bench/portable_survey.sh --threads 16 --dynamo resnet50 swin_t inception_v3:299
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
hetsched="$root/build/cli/hetsched"
threads=1
dynamo=""
dir=/tmp/portable_survey
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --hetsched) hetsched="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --dynamo) dynamo="--dynamo"; shift ;;
    --dir) dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "portable_survey: unknown option '$1'" >&2; exit 2 ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || { echo "portable_survey: name at least one torchvision model" >&2; exit 2; }
[ -x "$hetsched" ] || { echo "portable_survey: $hetsched not found (build cli/hetsched or pass --hetsched)" >&2; exit 2; }
mkdir -p "$dir"
profile="$dir/cpu$threads.yaml"
printf 'name: cpu%s\ndelegates:\n  cpu: {enabled: true, engine: xnnpack, threads: %s}\n' "$threads" "$threads" > "$profile"
for spec in "${models[@]}"; do
  m="${spec%%:*}"; size=224
  [ "$spec" != "$m" ] && size="${spec#*:}"
  f="$dir/$m${dynamo:+_dynamo}.onnx"
  if [ ! -f "$f" ] && ! python3 "$root/scripts/models/export_torchvision.py" "$m" $dynamo --size "$size" -o "$f" > "$dir/$m.log" 2>&1; then
    echo "$m: export failed: $(tail -1 "$dir/$m.log")"; continue
  fi
  out=$("$hetsched" bench "$f" --profile "$profile" --profile-ops --op-rows 1000 -n 10 2>&1 || true)
  lat=$(echo "$out" | grep -m1 '^latency' | awk '{print $3}')
  [ -n "$lat" ] || { echo "$m: hetsched failed: $(echo "$out" | tail -1)"; continue; }
  ort=$(python3 "$root/bench/ort_time.py" "$f" "1x3x${size}x${size}" "$threads" 2>/dev/null | tail -1 || true)
  portable=$(echo "$out" | awk '$2 == "ms" && $4 == "%" && $6 == "portable" {t[$5] += $1; n[$5]++}
    END {for (k in t) printf "%s x%d %.2f ms; ", k, n[k], t[k]}')
  echo "$m: hetsched ${lat} ms | ORT ${ort:-?} ms | portable: ${portable:-none}"
done
