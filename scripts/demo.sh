#!/usr/bin/env bash
# The main job: install what is missing, build (Release), then preview and run
# the bundled example model (the RFC's UnifiedVgfVulkanModel) with the default profile.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target hetsched hetsched_example_models
set -x
./build/cli/hetsched preview build/examples/rfc_model.hsg --profile configs/default.yaml
./build/cli/hetsched run build/examples/rfc_model.hsg --profile configs/default.yaml \
  --input build/examples/rfc_model_input.bin --output build/examples/rfc_model_output.bin
