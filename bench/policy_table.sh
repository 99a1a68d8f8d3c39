#!/usr/bin/env bash
# The auto-policy table of docs/models.md: calibrate once, then per model a
# copy of the costs updated with the model's own nodes, then every policy and
# each delegate alone on the model with predicted and measured latency.
#   bench/policy_table.sh --hetsched build/cli/hetsched --profile P MODEL[:SHAPE]... [-n 40]
# SHAPE is an --input-shape value (x=1x3x640x640). Costs files go to
# ${TMPDIR:-/tmp}/policy_table/.
set -euo pipefail
hetsched=build/cli/hetsched profile=configs/mixed_gpu.yaml requests=40 models=()
while [ $# -gt 0 ]; do
  case $1 in
    --hetsched) hetsched=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    -n) requests=$2; shift 2 ;;
    -h|--help) sed -n 2,7p "$0"; exit 0 ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || { echo "usage: $0 [--hetsched H] [--profile P] [-n N] MODEL[:SHAPE]..." >&2; exit 2; }
dir=${TMPDIR:-/tmp}/policy_table; mkdir -p "$dir"
"$hetsched" calibrate --profile "$profile" -o "$dir/base.yaml" 2>/dev/null | tail -1
for spec in "${models[@]}"; do
  model=${spec%%:*} shape=(); [ "$spec" != "$model" ] && shape=(--input-shape "${spec#*:}")
  costs=$dir/$(basename "$model").yaml
  cp "$dir/base.yaml" "$costs"
  "$hetsched" calibrate --profile "$profile" -o "$costs" --update --model "$model" "${shape[@]}" >/dev/null 2>&1
  echo "=== $model"
  grep -E "edges:" "$costs" || true
  "$hetsched" bench "$model" "${shape[@]}" --profile "$profile" --costs "$costs" --compare-policies -n "$requests" \
    --warmup 3 2>&1 | sed -n '/^ policy/,/^ note/p' | grep -v -E '^ note'
done
