#!/usr/bin/env bash
# Peak resident memory of `hetsched run` and of ONNX Runtime (CPU EP, through
# onnxruntime-node) on the same model, same input shape, same runs: each in
# its own process, measured by GNU time's "Maximum resident set size". Node's
# own baseline (the runtime loaded, no session) is printed beside ORT's.
#
# usage: bench/rss_compare.sh MODEL.onnx INPUT=1x3x224x224 [--build DIR] [--profile P] [--runs N] [--threads T]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
model=$1 shape=$2; shift 2
build="$root/build" profile="" runs=3 threads=2
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --profile) profile="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    *) echo "rss_compare: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x /usr/bin/time ] || { echo "rss_compare: needs GNU time (apt-get install time)" >&2; exit 2; }
name=${shape%%=*} dims=${shape#*=}
peak() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {printf "%.1f", $2 / 1024}'; }

hs=$(peak "$build/cli/hetsched" run "$model" -n "$runs" --input-shape "$shape" ${profile:+--profile "$profile"})
js="
const ort = require('$root/scripts/ort/common.js').loadOrt();
(async () => {
  if (process.argv.includes('baseline')) { ort.InferenceSession; return; }
  const dims = '$dims'.split('x').map(Number);
  const s = await ort.InferenceSession.create('$model', {intraOpNumThreads: $threads, executionMode: 'sequential'});
  const x = new ort.Tensor('float32', new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(0.5), dims);
  for (let i = 0; i < $runs; ++i) await s.run({'$name': x});
})();"
ort=$(peak node -e "$js")
base=$(peak node -e "$js" baseline)
echo "peak RSS, $(basename "$model"), $runs runs: hetsched ${hs} MiB, ONNX Runtime ${ort} MiB (node with onnxruntime-node loaded and no session: ${base} MiB): ratio $(python3 -c "print(f'{$hs / $ort:.2f}')")"
