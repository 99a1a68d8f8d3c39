#!/usr/bin/env bash
# Set-up for test/models_test.cc (run by ctest as a FIXTURES_SETUP test, and
# by the test itself when it finds no manifest): fetches the PP-OCR models and
# onnxruntime-node (scripts/fetch-models.sh), then makes ONNX Runtime
# references for the shapes the test runs, into the cache:
#   det  ch_PP-OCRv4_det_infer.onnx           1x3x640x640
#   cls  ch_ppocr_mobile_v2.0_cls_infer.onnx  1x3x48x192
# each with the "page" input generator (scripts/ort/common.js), seed 1, and
# ORT's CPU execution provider on 1 thread; and the opset 18-21 models of
# test/data/models18 (PyTorch 2.11's dynamo exporter, weights in .onnx.data):
#   encoder_op18  1x64x128    decoder_op20  1x64x128    vit_op21  1x3x32x32
# with the "ppocr" generator (uniform in [-1, 1)), seed 1, 1 thread.
#
# usage: setup_models.sh MANIFEST
# Writes MANIFEST as key=value lines: status=ready plus det_model,
# det_reference, cls_model, cls_reference (reference.json paths) and
# ort_modules (the node_modules holding onnxruntime-node); or
# status=unavailable plus reason=... when npm, node or the network is
# missing (exit 0: the tests skip and print the reason). Other failures
# (checksum mismatch, ORT error) exit 1.
set -euo pipefail

readonly kSeed=1
readonly kDist=page
readonly kThreads=1

manifest="${1:?usage: setup_models.sh MANIFEST}"
script_dir="$(cd "$(dirname "$0")" && pwd)"
cache="${HETSCHED_CACHE:-$HOME/.cache/hetsched}"
mkdir -p "$(dirname "$manifest")"

write_unavailable() {
  printf 'status=unavailable\nreason=%s\n' "$1" > "$manifest"
  echo "setup_models: unavailable: $1"
  exit 0
}

command -v node >/dev/null || write_unavailable "node not found (install Debian's nodejs and npm)"
set +e
paths="$("$script_dir/../fetch-models.sh" 2>"$manifest.log")"
rc=$?
set -e
cat "$manifest.log" >&2
if [ "$rc" -eq 2 ]; then
  write_unavailable "$(tail -n 1 "$manifest.log" | sed 's/^fetch-models: //')"
elif [ "$rc" -ne 0 ]; then
  echo "setup_models: scripts/fetch-models.sh failed (exit $rc)" >&2
  exit 1
fi
eval "$paths"
export HETSCHED_ORT_MODULES

reference() {  # reference MODEL SHAPE [DIST] → prints the reference.json path
  local stem dist="${3:-$kDist}"
  stem="$(basename "$1" .onnx)"
  node "$script_dir/make_reference.js" --model "$1" --shape "$2" --seed "$kSeed" --dist "$dist" \
    --threads "$kThreads" --out "$cache/references/${stem}_${2}_${dist}_s${kSeed}"
}

det_ref="$(reference "$HETSCHED_DET_MODEL" 1x3x640x640)"
cls_ref="$(reference "$HETSCHED_CLS_MODEL" 1x3x48x192)"
models18="$script_dir/../../test/data/models18"
encoder_ref="$(reference "$models18/encoder_op18.onnx" 1x64x128 ppocr)"
decoder_ref="$(reference "$models18/decoder_op20.onnx" 1x64x128 ppocr)"
vit_ref="$(reference "$models18/vit_op21.onnx" 1x3x32x32 ppocr)"
cat > "$manifest.part" <<EOF
status=ready
det_model=$HETSCHED_DET_MODEL
det_reference=$det_ref
cls_model=$HETSCHED_CLS_MODEL
cls_reference=$cls_ref
encoder_op18_model=$(cd "$models18" && pwd)/encoder_op18.onnx
encoder_op18_reference=$encoder_ref
decoder_op20_model=$(cd "$models18" && pwd)/decoder_op20.onnx
decoder_op20_reference=$decoder_ref
vit_op21_model=$(cd "$models18" && pwd)/vit_op21.onnx
vit_op21_reference=$vit_ref
ort_modules=$HETSCHED_ORT_MODULES
EOF
mv "$manifest.part" "$manifest"
rm -f "$manifest.log"
cat "$manifest"
