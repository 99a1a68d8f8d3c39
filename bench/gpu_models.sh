#!/usr/bin/env bash
# The GPU delegates on torchvision models against PyTorch, in one run: the
# tables of docs/models.md's "GPU speed" sections (the H200 ones of session
# 10). For each model (exported here at opset 18 by the current exporter,
# random weights, BatchNorm statistics calibrated) and each strict profile
# (every node on the GPU delegate or the build fails), `hetsched bench`
# p50 of a request (run_into() on the host) and of a request on GPU buffers
# (--device-io: submit to the GPU's completion), then bench/torch_peers.py
# (eager and CUDA graphs, fp32 and fp16) on the same GPU.
#
# usage: bench/gpu_models.sh [--hetsched PATH] [--models "resnet50 mobilenet_v3_small ..."]
#                            [--profiles "vk32 vk16 vk16s32 vk32s16 vgf32"] [--runs N] [--no-torch]
# Profiles: vk32 / vk16 the Vulkan delegate at precision fp32 / fp16 (storage
# auto), vk16s32 / vk32s16 the same with storage fp32 / fp16, vgf32 / vgf16
# the VGF delegate at fp32 / fp16. Needs PyTorch with torchvision (the GPU machine has it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
hetsched=$root/build/cli/hetsched
models="resnet50 mobilenet_v3_small efficientnet_b0 densenet121 regnet_y_400mf"
profiles="vk32 vk16 vgf32"
runs=300
torch=1
while [ $# -gt 0 ]; do
  case "$1" in
    --hetsched) hetsched=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --profiles) profiles=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --no-torch) torch=0; shift ;;
    *) echo "usage: $0 [--hetsched PATH] [--models \"...\"] [--profiles \"...\"] [--runs N] [--no-torch]" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Strict profiles: the delegate, precision and storage of each name.
profile() {
  local name=$1 delegate=$2 precision=$3 storage=$4
  cat > "$work/$name.yaml" <<EOF
name: $name
delegates:
  $delegate: {enabled: true, precision: $precision, storage: $storage}
  cpu: {enabled: true}
partition: {prefer: ${delegate}_first, fallback: error}
EOF
}
profile vk32 vulkan fp32 auto
profile vk16 vulkan fp16 auto
profile vk16s32 vulkan fp16 fp32
profile vk32s16 vulkan fp32 fp16
profile vgf32 vgf fp32 auto
profile vgf16 vgf fp16 auto

for m in $models; do
  python3 "$root/scripts/models/export_torchvision.py" "$m" -o "$work/$m.onnx" --opset 18 --dynamo --calibrate-bn \
    > "$work/$m.log" 2>&1 || { echo "$m: export failed (see $work/$m.log)"; continue; }
  dispatches=$("$hetsched" preview "$work/$m.onnx" --profile "$work/vk32.yaml" 2>&1 |
               grep -oE "dispatches [0-9]+ · barriers [0-9]+" | head -1 || true)
  echo "$m ($dispatches on vk32)"
  for p in $profiles; do
    request=$("$hetsched" bench "$work/$m.onnx" --profile "$work/$p.yaml" -n "$runs" --warmup 30 2>&1 |
              grep -E "p50|error" | head -1 | sed 's/ (run_into.*//' || true)
    device=$("$hetsched" bench "$work/$m.onnx" --profile "$work/$p.yaml" -n "$runs" --warmup 30 --device-io 2>&1 |
             grep -E "p50|error" | head -1 | sed 's/ (GPU buffers.*//' || true)
    echo "  $p: request [$request] device-io [$device]"
  done
done
if [ "$torch" = 1 ]; then
  python3 "$here/torch_peers.py" --models "$(echo $models | tr ' ' ',')" --runs 100
fi
