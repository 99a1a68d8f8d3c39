#!/usr/bin/env bash
# The resource scheduler's targets, measured with `hetsched bench` in one run:
#   parallel islands  parallel_branches (a GPU branch and a CPU-only branch)
#                     vs each branch alone: latency ratio both / (gpu + cpu);
#   pipelining        cpu_gpu_cpu at --in-flight 4 vs 1: throughput ratio;
#   GPU timestamps    gpu_branch: GPU island time per request / run latency.
# Usage: bench/scheduler_bench.sh HETSCHED MAKE_EXAMPLES PROFILE C S GPU_LAYERS CPU_LAYERS [THREADS] [REQUESTS]
#                                 [CHAIN_GPU_LAYERS]
# PROFILE must pin ConvTranspose, the models' CPU branch, to the CPU
# (`pin: [{op: ConvTranspose, delegate: cpu}]` under partition), since the
# Vulkan delegate runs it too.
# (C S GPU_LAYERS CPU_LAYERS size the models: balance the two branches on the machine at hand.
# The chain has CPU_LAYERS on each side of CHAIN_GPU_LAYERS, default 2 x GPU_LAYERS; pipelining
# gains most when its GPU stage takes as long as its two CPU stages do with requests in flight.
# On the H100 machine `64 56 112 8 0 200 272` makes branches of ~2.5 ms; docs/architecture.md
# ("The scheduler") has the figures and why much smaller branches sit nearer the targets.)
set -euo pipefail
hetsched=$1 make_examples=$2 profile=$3 c=$4 s=$5 g=$6 k=$7 threads=${8:-0} requests=${9:-200}
chain_g=${10:-$((2 * g))}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The chain has CPU layers on both sides of its GPU stage: by default twice
# the GPU layers keep its CPU and GPU work as balanced as the two branches are.
mkdir -p "$dir/chain"
"$make_examples" "$dir/chain" --scheduler-models "$c" "$s" "$chain_g" "$k" >/dev/null
"$make_examples" "$dir" --scheduler-models "$c" "$s" "$g" "$k"
mv "$dir/chain/cpu_gpu_cpu.hsg" "$dir/cpu_gpu_cpu.hsg"
bench() { "$hetsched" bench "$dir/$1" --profile "$profile" --threads "$threads" -n "$requests" --json "${@:2}"; }
field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(eval('d'+sys.argv[2]))" "$1" "$2"; }

both=$(bench parallel_branches.hsg --in-flight 1 --trace "${TRACE_DIR:-$dir}/parallel_branches_trace.json")
gpu=$(bench gpu_branch.hsg --in-flight 1 --trace "${TRACE_DIR:-$dir}/gpu_branch_trace.json")
cpu=$(bench cpu_branch.hsg --in-flight 1)
one=$(bench cpu_gpu_cpu.hsg --in-flight 1)
four=$(bench cpu_gpu_cpu.hsg --in-flight 4 --trace "${TRACE_DIR:-$dir}/cpu_gpu_cpu_4_trace.json")
for j in "$both" "$gpu" "$cpu" "$one" "$four"; do echo "$j"; done
p_both=$(field "$both" "['latency_ms']['p50']"); p_gpu=$(field "$gpu" "['latency_ms']['p50']"); p_cpu=$(field "$cpu" "['latency_ms']['p50']")
t1=$(field "$one" "['throughput_rps']"); t4=$(field "$four" "['throughput_rps']")
gpu_island=$(python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(sum(v for k,v in d['island_ms'].items() if k.startswith('gpu:')))" "$gpu")
gpu_run=$(field "$gpu" "['run_ms']['p50']")
python3 - "$p_both" "$p_gpu" "$p_cpu" "$t1" "$t4" "$gpu_island" "$gpu_run" <<'PY'
import sys
both, gpu, cpu, t1, t4, isl, run = map(float, sys.argv[1:])
print(f"parallel islands: both branches {both:.3f} ms, gpu alone {gpu:.3f} ms, cpu alone {cpu:.3f} ms: "
      f"both / (gpu + cpu) = {both / (gpu + cpu):.2f} (target <= 0.6)")
print(f"pipelining: cpu_gpu_cpu throughput {t1:.1f} rps at 1 in flight, {t4:.1f} at 4: ratio {t4 / t1:.2f} (target >= 1.6)")
print(f"GPU timestamps: gpu_branch GPU island time {isl:.3f} ms of {run:.3f} ms run latency: {isl / run:.2f} (target >= 0.9)")
PY
